-- Up Migration
-- How a verification was asked for: answered in the request (sync), accepted and finished later
-- (async, `Prefer: respond-async`), or as a row of a batch. Asynchronous and batch rows wait out
-- authority outages; the sweep's two-minute and one-hour rules are for synchronous rows only.
-- A column with a constant default is a catalogue-only change: no table rewrite.
ALTER TABLE verifications
  ADD COLUMN delivery text NOT NULL DEFAULT 'sync' CHECK (delivery IN ('sync', 'async', 'batch')),
  ADD COLUMN batch_id text,
  ADD CONSTRAINT verifications_batch_id_only_on_batch CHECK (batch_id IS NULL OR delivery = 'batch');

CREATE INDEX verifications_batch_idx ON verifications (batch_id, created_at) WHERE batch_id IS NOT NULL;
-- The sweep's and the metrics' view of what is waiting, by delivery.
CREATE INDEX verifications_pending_delivery_idx ON verifications (delivery, created_at) WHERE status = 'pending';

-- Rows not yet ended per organisation, asynchronous and batch together (ORG_MAX_PENDING). Kept by
-- the trigger below, so no code path can forget it; the API reads it under the row lock the
-- trigger's increment took, in the transaction that inserted, so two requests can never both pass
-- the cap. Lock order everywhere: the wallet row (the unit hold), then this row.
CREATE TABLE org_pending_rows (
  org_id bigint PRIMARY KEY REFERENCES organisations (id),
  pending integer NOT NULL DEFAULT 0 CHECK (pending >= 0)
);

CREATE FUNCTION verifications_count_pending() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'pending' AND OLD.delivery <> 'sync' THEN
    UPDATE org_pending_rows SET pending = pending - 1 WHERE org_id = OLD.org_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'pending' AND NEW.delivery <> 'sync' THEN
    INSERT INTO org_pending_rows (org_id, pending) VALUES (NEW.org_id, 1)
    ON CONFLICT (org_id) DO UPDATE SET pending = org_pending_rows.pending + 1;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER verifications_count_pending
  AFTER INSERT OR DELETE OR UPDATE OF status, delivery ON verifications
  FOR EACH ROW EXECUTE FUNCTION verifications_count_pending();

-- Down Migration
DROP TRIGGER verifications_count_pending ON verifications;
DROP FUNCTION verifications_count_pending();
DROP TABLE org_pending_rows;
DROP INDEX verifications_pending_delivery_idx;
DROP INDEX verifications_batch_idx;
ALTER TABLE verifications DROP CONSTRAINT verifications_batch_id_only_on_batch, DROP COLUMN batch_id, DROP COLUMN delivery;
