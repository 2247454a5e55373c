-- Up Migration
-- Batches: vNIN rows and recorded consent. A vNIN row's token waits sealed in Redis only (README:
-- vNIN); what the lookup keeps here is its keyed hash, sealed like any waiting identifier. Each
-- lookup carries the consent its rows stated (a row's own, else the batch's), copied onto its
-- verification when it is queued. Nullable column, no rewrite; the check is added NOT VALID and then
-- validated, so the scan does not hold the table's exclusive lock.
ALTER TABLE batch_lookups ADD COLUMN consent jsonb;
ALTER TABLE batch_lookups ADD CONSTRAINT batch_lookups_consent_shape CHECK (
  consent IS NULL OR (
    jsonb_typeof(consent) = 'object'
    AND consent ?& ARRAY['obtained_at', 'channel', 'notice_version']
    AND consent->>'channel' IN ('web', 'mobile', 'in_person', 'ussd', 'other')
    AND length(consent->>'notice_version') BETWEEN 1 AND 64
  )
) NOT VALID;
ALTER TABLE batch_lookups VALIDATE CONSTRAINT batch_lookups_consent_shape;

-- Down Migration
ALTER TABLE batch_lookups DROP COLUMN consent;
