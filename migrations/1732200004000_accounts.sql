-- Up Migration

-- Every token carries the token_version it was issued under and is refused once the row's version
-- has moved on. A constant default is a catalogue-only change (PostgreSQL 11+): no table rewrite.
ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;
-- Users that exist today are never asked to change their password: the default is false, and only
-- the account-creation path sets it for new organisation users.
ALTER TABLE users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;

-- Whatever code path changes a password, a role or the disabled flag, every earlier token of the
-- user ends: the invariant lives in the schema, not in each caller.
CREATE FUNCTION users_bump_token_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.password_hash IS DISTINCT FROM OLD.password_hash
     OR NEW.role IS DISTINCT FROM OLD.role
     OR NEW.disabled IS DISTINCT FROM OLD.disabled THEN
    NEW.token_version := OLD.token_version + 1;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER users_token_version BEFORE UPDATE OF password_hash, role, disabled ON users
  FOR EACH ROW EXECUTE FUNCTION users_bump_token_version();

-- Reset tokens are kept only as SHA-256 digests (they are 256-bit random values, so a fast digest
-- is enough); a row is used at most once.
CREATE TABLE password_resets (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id),
  token_hash bytea NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_resets_open_idx ON password_resets (user_id) WHERE used_at IS NULL;

-- Credentials for an organisation's servers (OAuth 2.0 client credentials). Retired, never removed:
-- verifications made with a client's tokens keep pointing at it.
CREATE TABLE api_clients (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  client_id text NOT NULL UNIQUE CHECK (client_id ~ '^cli_[0-9a-f]{24}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
  role text NOT NULL CHECK (role IN ('org_admin', 'member')),
  secret_hash bytea NOT NULL,
  created_by bigint REFERENCES users (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  deleted_at timestamptz
);
CREATE INDEX api_clients_org_idx ON api_clients (org_id, id) WHERE deleted_at IS NULL;

-- Password-reset e-mails go through the receipts' outbox. Their body (address, token) is sealed
-- with ENCRYPTION_KEYS in body_enc and erased once sent; payload keeps nothing secret.
ALTER TABLE outbox ADD COLUMN body_enc bytea, ADD COLUMN key_id text;
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email', 'password_reset_email')) NOT VALID;
ALTER TABLE outbox VALIDATE CONSTRAINT outbox_kind_check;

-- A verification or top-up is made either by a user or by an API client. Dropping NOT NULL is a
-- catalogue change; the new foreign keys and the check are added NOT VALID and validated after, so
-- the long scan runs without blocking writes.
ALTER TABLE verifications ALTER COLUMN user_id DROP NOT NULL, ADD COLUMN api_client_id bigint;
ALTER TABLE verifications ADD CONSTRAINT verifications_api_client_fk FOREIGN KEY (api_client_id) REFERENCES api_clients (id) NOT VALID;
ALTER TABLE verifications ADD CONSTRAINT verifications_one_actor CHECK ((user_id IS NULL) <> (api_client_id IS NULL)) NOT VALID;
ALTER TABLE verifications VALIDATE CONSTRAINT verifications_api_client_fk;
ALTER TABLE verifications VALIDATE CONSTRAINT verifications_one_actor;
ALTER TABLE topups ADD COLUMN api_client_id bigint;
ALTER TABLE topups ADD CONSTRAINT topups_api_client_fk FOREIGN KEY (api_client_id) REFERENCES api_clients (id) NOT VALID;
ALTER TABLE topups VALIDATE CONSTRAINT topups_api_client_fk;

-- Down Migration
ALTER TABLE topups DROP COLUMN api_client_id;
ALTER TABLE verifications DROP CONSTRAINT verifications_one_actor;
ALTER TABLE verifications DROP COLUMN api_client_id;
ALTER TABLE verifications ALTER COLUMN user_id SET NOT NULL;
DELETE FROM outbox WHERE kind = 'password_reset_email';
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('receipt_email'));
ALTER TABLE outbox DROP COLUMN body_enc, DROP COLUMN key_id;
DROP TABLE api_clients;
DROP TABLE password_resets;
DROP TRIGGER users_token_version ON users;
DROP FUNCTION users_bump_token_version();
ALTER TABLE users DROP COLUMN must_change_password, DROP COLUMN token_version;
