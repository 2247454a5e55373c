-- Up Migration

-- Virtual NIN verifications. The row keeps a keyed hash of the token inside its sealed query, never
-- the token; a refused vNIN is status not_found with the refusal as failure_code, so a requery
-- answers the same 404 with the same code.
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_mode_check;
ALTER TABLE verifications ADD CONSTRAINT verifications_mode_check CHECK (mode IN ('nin', 'phone', 'demography', 'vnin'));
-- Any mode that looks a person up by vNIN (not only mode 'vnin') may record a refusal.
ALTER TABLE verifications ADD CONSTRAINT verifications_vnin_refusal_check CHECK (
  failure_code IS NULL OR status <> 'not_found'
  OR failure_code IN ('vnin_not_found', 'vnin_expired', 'vnin_wrong_enterprise', 'vnin_used')
);

-- Down Migration
ALTER TABLE verifications DROP CONSTRAINT verifications_vnin_refusal_check;
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_mode_check;
ALTER TABLE verifications ADD CONSTRAINT verifications_mode_check CHECK (mode IN ('nin', 'phone', 'demography'));
