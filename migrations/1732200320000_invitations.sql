-- Up Migration
-- Invitations to join an organisation's team (issue 34): an e-mailed link valid 72 hours, usable once.
-- Only the token's SHA-256 is stored (256 random bits: a fast digest is as hard to reverse as a slow
-- hash); the e-mail carrying the token waits in the outbox sealed.
CREATE TABLE invitations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organisations (id),
  email text NOT NULL,
  username text NOT NULL,
  -- An organisation role of src/lib/roles.ts (checked there, and by users' CHECK when accepted): no list
  -- here, so that a new role stays one entry and the users/api_clients CHECKs.
  role text NOT NULL,
  token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
  invited_by bigint REFERENCES users (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
  accepted_at timestamptz,
  user_id bigint REFERENCES users (id),
  revoked_at timestamptz,
  CHECK ((accepted_at IS NULL) = (user_id IS NULL)),
  CHECK (accepted_at IS NULL OR revoked_at IS NULL)
);
CREATE INDEX invitations_org_idx ON invitations (org_id, id);
-- One open invitation per username: a second would race the first at acceptance.
CREATE UNIQUE INDEX invitations_one_open_username ON invitations (username) WHERE accepted_at IS NULL AND revoked_at IS NULL;

ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email', 'invitation_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- Down Migration
DELETE FROM outbox WHERE kind = 'invitation_email';
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email', 'low_balance_email', 'webhook_disabled_email'));
DROP TABLE invitations;
