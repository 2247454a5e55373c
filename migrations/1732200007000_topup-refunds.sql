-- Up Migration
-- Top-ups that cannot simply be credited: payments for retired organisations (refund_due, refunding,
-- refunded), payments reversed after crediting (charged_back), and amount mismatches an operator
-- resolved. Every new column is nullable without a default: a catalogue-only change, no rewrite.
ALTER TABLE topups
  ADD COLUMN resolved_at timestamptz,
  ADD COLUMN resolved_by text,
  ADD COLUMN resolution_note text,
  -- The processor's id of the refund once it answered, its last reported status and error.
  ADD COLUMN refund_id text,
  ADD COLUMN refund_status text,
  ADD COLUMN refund_error text,
  ADD COLUMN refund_amount bigint,
  -- Set when a command claimed the refund (refund_due -> refunding), before the processor is called.
  ADD COLUMN refund_claimed_at timestamptz,
  ADD COLUMN refunded_at timestamptz,
  ADD COLUMN charged_back_at timestamptz;

-- New constraints go in NOT VALID (no scan under the exclusive lock), old rows are then checked by
-- VALIDATE, and only then is the narrower constraint they replace dropped.
ALTER TABLE topups ADD CONSTRAINT topups_status_known CHECK (status IN (
  'pending', 'credited', 'failed', 'abandoned', 'amount_mismatch', 'refund_due', 'refunding', 'refunded', 'charged_back'
)) NOT VALID;
ALTER TABLE topups VALIDATE CONSTRAINT topups_status_known;
ALTER TABLE topups DROP CONSTRAINT topups_status_check;

-- A charged-back top-up was credited first, so it keeps its credited_at.
ALTER TABLE topups ADD CONSTRAINT topups_credited_at_set
  CHECK ((status IN ('credited', 'charged_back')) = (credited_at IS NOT NULL)) NOT VALID;
ALTER TABLE topups VALIDATE CONSTRAINT topups_credited_at_set;
-- PostgreSQL named the replaced one topups_check1 (topups_check is the total_amount rule, kept).
ALTER TABLE topups DROP CONSTRAINT topups_check1;

-- A credited top-up was paid its total, unless an operator resolved it (topup:resolve --credit).
-- IS NOT DISTINCT FROM: a credited row without a paid amount breaks the rule too.
ALTER TABLE topups ADD CONSTRAINT topups_credited_paid_total
  CHECK (status NOT IN ('credited', 'charged_back') OR paid_amount IS NOT DISTINCT FROM total_amount OR resolved_at IS NOT NULL) NOT VALID;
-- Rows credited before the rule existed and not paid their total are marked as resolved by this
-- migration, so they stay visible as exceptions instead of blocking the constraint.
UPDATE topups
SET resolved_at = credited_at, resolved_by = 'migration 1732200007000',
    resolution_note = 'credited before the rule that a credited top-up was paid its total'
WHERE status IN ('credited', 'charged_back') AND paid_amount IS DISTINCT FROM total_amount AND resolved_at IS NULL;
ALTER TABLE topups VALIDATE CONSTRAINT topups_credited_paid_total;

ALTER TABLE topups ADD CONSTRAINT topups_resolved_by_whom CHECK ((resolved_at IS NULL) = (resolved_by IS NULL)) NOT VALID;
ALTER TABLE topups VALIDATE CONSTRAINT topups_resolved_by_whom;
ALTER TABLE topups ADD CONSTRAINT topups_refunded_when CHECK (status <> 'refunded' OR refunded_at IS NOT NULL) NOT VALID;
ALTER TABLE topups VALIDATE CONSTRAINT topups_refunded_when;

-- The daily re-check of abandoned top-ups and the refund reconciliation read these small sets.
CREATE INDEX topups_abandoned_idx ON topups (created_at) WHERE status = 'abandoned';
CREATE INDEX topups_refunding_idx ON topups (refund_claimed_at) WHERE status = 'refunding';

-- Down Migration
DROP INDEX topups_refunding_idx;
DROP INDEX topups_abandoned_idx;
ALTER TABLE topups DROP CONSTRAINT topups_refunded_when;
ALTER TABLE topups DROP CONSTRAINT topups_resolved_by_whom;
ALTER TABLE topups DROP CONSTRAINT topups_credited_paid_total;
ALTER TABLE topups DROP CONSTRAINT topups_credited_at_set;
ALTER TABLE topups DROP CONSTRAINT topups_status_known;
ALTER TABLE topups ADD CONSTRAINT topups_status_check
  CHECK (status IN ('pending', 'credited', 'failed', 'abandoned', 'amount_mismatch')) NOT VALID;
ALTER TABLE topups ADD CONSTRAINT topups_check1 CHECK ((status = 'credited') = (credited_at IS NOT NULL)) NOT VALID;
ALTER TABLE topups
  DROP COLUMN charged_back_at,
  DROP COLUMN refunded_at,
  DROP COLUMN refund_claimed_at,
  DROP COLUMN refund_amount,
  DROP COLUMN refund_error,
  DROP COLUMN refund_status,
  DROP COLUMN refund_id,
  DROP COLUMN resolution_note,
  DROP COLUMN resolved_by,
  DROP COLUMN resolved_at;
