-- Up Migration
-- Two rules that lived only in code move into the schema, added the safe way on live tables:
-- (1) NOT VALID constraints, which check every new row at once and take their strong lock only for
-- an instant; (2) a backfill of old rows; (3) VALIDATE, which scans under a lock that lets inserts
-- and updates go on. Each step commits before the next (node-pg-migrate runs a SQL file inside its
-- transaction; the COMMIT/BEGIN pairs below split it, as the runner itself does for migrations that
-- opt out of transactions), so the scan never runs under the brief ACCESS EXCLUSIVE lock of step 1.
-- Every step may run again: a failed run leaves the committed steps in place and no migration row.

-- Step 1. Wait at most 5 s for the lock rather than queue every insert behind a long transaction.
SET LOCAL lock_timeout = '5s';
-- A ledger line of a verification or a top-up names it: the one-debit and one-credit unique indexes
-- are partial on `reference`, so a null there would escape them.
ALTER TABLE wallet_transactions DROP CONSTRAINT IF EXISTS wallet_transactions_reference_required;
ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_reference_required
  CHECK (reference IS NOT NULL OR kind NOT IN ('verification', 'topup', 'fixture_verification')) NOT VALID;
-- A unit is held (wallets.reserved) only while the verification holding it is pending.
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_hold_only_while_pending;
ALTER TABLE verifications ADD CONSTRAINT verifications_hold_only_while_pending
  CHECK (NOT holds_unit OR status = 'pending') NOT VALID;
-- The ledger audit's second comparison (reserved units against the verifications holding one);
-- a constant default is a catalogue-only change.
ALTER TABLE ledger_audits ADD COLUMN IF NOT EXISTS reserved_mismatches jsonb NOT NULL DEFAULT '[]'::jsonb;
COMMIT;

-- Step 2. Backfill. Neither rule was ever broken by the code, so on a healthy database both
-- statements find nothing and change nothing.
BEGIN;
SET LOCAL lock_timeout = '5s';
-- A finished verification still marked as holding: give its unit back, in the same statement that
-- clears the mark (GREATEST: a wallet whose reserved already left it out stays at zero, not below).
WITH cleared AS (
  UPDATE verifications SET holds_unit = false
  WHERE holds_unit AND status <> 'pending'
  RETURNING org_id
), per_org AS (
  SELECT org_id, count(*) AS n FROM cleared GROUP BY org_id
)
UPDATE wallets w SET reserved = GREATEST(w.reserved - per_org.n, 0)
FROM per_org WHERE w.org_id = per_org.org_id;
-- A reference cannot be recovered for an old line that lacks one: it is labelled so that the gap
-- is visible and the rule holds. The ledger is append-only, so its guard trigger is lifted for
-- this one statement, and only when such a line exists (lifting it blocks inserts until COMMIT).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM wallet_transactions
             WHERE reference IS NULL AND kind IN ('verification', 'topup', 'fixture_verification')) THEN
    ALTER TABLE wallet_transactions DISABLE TRIGGER wallet_transactions_no_update;
    UPDATE wallet_transactions SET reference = 'UNREFERENCED-' || id
    WHERE reference IS NULL AND kind IN ('verification', 'topup', 'fixture_verification');
    ALTER TABLE wallet_transactions ENABLE TRIGGER wallet_transactions_no_update;
    RAISE WARNING 'ledger lines without a reference were labelled UNREFERENCED-<id>';
  END IF;
END $$;
COMMIT;

-- Step 3. Validate: a scan under SHARE UPDATE EXCLUSIVE, which ordinary reads and writes pass.
BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE wallet_transactions VALIDATE CONSTRAINT wallet_transactions_reference_required;
ALTER TABLE verifications VALIDATE CONSTRAINT verifications_hold_only_while_pending;

-- Down Migration
ALTER TABLE ledger_audits DROP COLUMN IF EXISTS reserved_mismatches;
ALTER TABLE verifications DROP CONSTRAINT IF EXISTS verifications_hold_only_while_pending;
ALTER TABLE wallet_transactions DROP CONSTRAINT IF EXISTS wallet_transactions_reference_required;
