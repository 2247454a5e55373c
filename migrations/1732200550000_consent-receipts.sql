-- Up Migration
-- The person's consent receipt (docs/receipts.md): after a verification link's submission the page
-- gives the person /r/<token>. Only the token's SHA-256 is kept (128 random bits: a fast digest is as
-- hard to reverse as a slow hash). The receipt itself is read from its verification every time, so
-- it holds nothing of its own but the link's purpose as the person read it (no personal data).
CREATE TABLE consent_receipts (
  token_hash bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
  reference_id text NOT NULL UNIQUE REFERENCES verifications (reference_id) ON DELETE CASCADE,
  purpose text CHECK (length(purpose) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL
);

-- A receipt lives as long as its verification is kept: erasing the verification (retention, or the
-- person's erasure: both end it as 'expired') removes its receipt in the same statement.
CREATE FUNCTION consent_receipts_erase() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM consent_receipts WHERE reference_id = NEW.reference_id;
  RETURN NULL;
END $$;
CREATE TRIGGER verifications_erase_receipt
  AFTER UPDATE OF status ON verifications
  FOR EACH ROW WHEN (NEW.status = 'expired' AND OLD.status IS DISTINCT FROM 'expired')
  EXECUTE FUNCTION consent_receipts_erase();

-- The receipt e-mailed to an address the person types: sealed whole like every other e-mail. The
-- kind is added to the list the constraint holds now, so that kinds added alongside stay allowed.
DO $$
DECLARE def text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conname = 'outbox_kind_check' AND conrelid = 'outbox'::regclass;
  IF def IS NULL OR position('ARRAY[' IN def) = 0 THEN RAISE EXCEPTION 'outbox_kind_check is not a list of kinds: %', def; END IF;
  EXECUTE 'ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check';
  EXECUTE 'ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check ' || replace(def, 'ARRAY[', 'ARRAY[''consent_receipt_email''::text, ') || ' NOT VALID';
  EXECUTE 'ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check';
END $$;

-- Down Migration
DELETE FROM outbox WHERE kind = 'consent_receipt_email';
DO $$
DECLARE def text;
BEGIN
  SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conname = 'outbox_kind_check' AND conrelid = 'outbox'::regclass;
  EXECUTE 'ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check';
  EXECUTE 'ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check ' || replace(def, '''consent_receipt_email''::text, ', '');
END $$;
DROP TRIGGER verifications_erase_receipt ON verifications;
DROP FUNCTION consent_receipts_erase();
DROP TABLE consent_receipts;
