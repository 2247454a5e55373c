-- Up Migration
-- When the payer paid, as the processor's verify answer says (`paid_at`), kept with the credit (or the
-- amount mismatch that holds it): a VAT invoice is dated by the payment, which can come hours or
-- days before the credit (a lost webhook, the daily re-check of abandoned top-ups). Rows credited
-- before this column read their credit's time.
ALTER TABLE topups ADD COLUMN paid_at timestamptz;

-- Down Migration
ALTER TABLE topups DROP COLUMN paid_at;
