-- Up Migration
-- The monthly e-mail to finance officers linking the statement of the Lagos month that ended (issue 34
-- item 3). One row per user and month, taken in the transaction that queues the e-mail: the primary key
-- is what makes the monthly job safe to run again (a retry, a second worker, a schedule that fires
-- twice) without a second e-mail.
CREATE TABLE statement_mails (
  user_id bigint NOT NULL REFERENCES users (id),
  -- yyyy-mm, a Lagos month
  month text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  -- Set in the transaction that takes the row (the row first, so a concurrent run waits on it).
  outbox_id bigint REFERENCES outbox (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, month)
);

ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email', 'auto_topup_declined_email', 'statement_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- Down Migration
DROP TABLE statement_mails;
DELETE FROM outbox WHERE kind = 'statement_email';
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email', 'auto_topup_declined_email'));
