-- Up Migration
-- Several alert recipients (issue 34 item 7): the addresses an organisation's administrators choose for
-- its low-balance alerts. Empty (the default) keeps the old rule: its administrators, else its billing
-- address. At most 10, checked here too so that no path (API, CLI, SQL) stores a longer list.
ALTER TABLE organisations ADD COLUMN alert_emails text[] NOT NULL DEFAULT '{}'
  CHECK (cardinality(alert_emails) <= 10 AND array_position(alert_emails, NULL) IS NULL);

-- Down Migration
ALTER TABLE organisations DROP COLUMN alert_emails;
