-- Up Migration
-- Face match (POST /verify-nin/face): a verification of mode 'face', and the ledger line of the units a
-- compared face match costs beyond its lookup's unit (kind 'face_match', at most one per verification:
-- the unique index refuses a second). Checks added NOT VALID and then validated (no long exclusive lock).
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_mode_check;
ALTER TABLE verifications ADD CONSTRAINT verifications_mode_check
  CHECK (mode IN ('nin', 'phone', 'demography', 'vnin', 'match', 'face')) NOT VALID;
ALTER TABLE verifications VALIDATE CONSTRAINT verifications_mode_check;
ALTER TABLE wallet_transactions DROP CONSTRAINT IF EXISTS wallet_transactions_kind_check;
ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_kind_check
  CHECK (kind IN ('verification', 'fixture_verification', 'topup', 'adjustment', 'face_match')) NOT VALID;
ALTER TABLE wallet_transactions VALIDATE CONSTRAINT wallet_transactions_kind_check;
CREATE UNIQUE INDEX wallet_transactions_one_face_match ON wallet_transactions (reference) WHERE kind = 'face_match';
ALTER TABLE wallet_transactions DROP CONSTRAINT IF EXISTS wallet_transactions_reference_required;
ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_reference_required
  CHECK (reference IS NOT NULL OR kind NOT IN ('verification', 'topup', 'fixture_verification', 'face_match')) NOT VALID;
ALTER TABLE wallet_transactions VALIDATE CONSTRAINT wallet_transactions_reference_required;
-- The organisation's face match threshold on the 0-100 confidence scale (default 75: distance 0.545,
-- docs/adr/0006-face-model.md); a match is confidence >= threshold. The integrator's risk decision.
ALTER TABLE organisations ADD COLUMN face_match_threshold smallint NOT NULL DEFAULT 75;
ALTER TABLE organisations ADD CONSTRAINT organisations_face_match_threshold_range CHECK (face_match_threshold BETWEEN 1 AND 100) NOT VALID;
ALTER TABLE organisations VALIDATE CONSTRAINT organisations_face_match_threshold_range;

-- Down Migration
ALTER TABLE organisations DROP COLUMN face_match_threshold;
ALTER TABLE wallet_transactions DROP CONSTRAINT wallet_transactions_reference_required;
ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_reference_required
  CHECK (reference IS NOT NULL OR kind NOT IN ('verification', 'topup', 'fixture_verification'));
DROP INDEX IF EXISTS wallet_transactions_one_face_match;
ALTER TABLE wallet_transactions DROP CONSTRAINT wallet_transactions_kind_check;
ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_kind_check CHECK (kind IN ('verification', 'fixture_verification', 'topup', 'adjustment'));
ALTER TABLE verifications DROP CONSTRAINT verifications_mode_check;
ALTER TABLE verifications ADD CONSTRAINT verifications_mode_check CHECK (mode IN ('nin', 'phone', 'demography', 'vnin', 'match'));
