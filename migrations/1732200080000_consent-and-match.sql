-- Up Migration
-- Recorded consent and match-only verifications. The new columns are nullable or carry a constant
-- default: catalogue-only changes, no table rewrite.

-- An organisation may require a consent statement on every live verification.
ALTER TABLE organisations ADD COLUMN require_consent boolean NOT NULL DEFAULT false;

-- How the person agreed (when, channel, notice version): stated by the caller, not personal data.
ALTER TABLE verifications
  ADD COLUMN consent jsonb
    CONSTRAINT verifications_consent_shape CHECK (
      consent IS NULL OR (
        jsonb_typeof(consent) = 'object'
        AND consent ?& ARRAY['obtained_at', 'channel', 'notice_version']
        AND consent->>'channel' IN ('web', 'mobile', 'in_person', 'ussd', 'other')
        AND length(consent->>'notice_version') BETWEEN 1 AND 64
      )
    );

-- match: a match-only verification (only booleans and scores are kept, never the record).
-- vnin: a verification by virtual NIN (the token itself is never stored).
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_mode_check;
ALTER TABLE verifications ADD CONSTRAINT verifications_mode_check
  CHECK (mode IN ('nin', 'phone', 'demography', 'vnin', 'match')) NOT VALID;
ALTER TABLE verifications VALIDATE CONSTRAINT verifications_mode_check;

-- Down Migration
ALTER TABLE verifications DROP CONSTRAINT verifications_mode_check;
ALTER TABLE verifications ADD CONSTRAINT verifications_mode_check CHECK (mode IN ('nin', 'phone', 'demography'));
ALTER TABLE verifications DROP COLUMN consent;
ALTER TABLE organisations DROP COLUMN require_consent;
