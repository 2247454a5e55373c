-- Up Migration
-- Two-factor sign-in (TOTP). One row per user who has started enrolment; enabled_at is set once a
-- code from the authenticator app confirmed it. The secret is sealed with the encryption key ring
-- (AES-256-GCM, key_id names the key). last_step is the last 30-second step whose code was
-- accepted: a code is taken by one UPDATE ... WHERE last_step < step, so a replay, even a parallel
-- one, finds nothing to update.
CREATE TABLE user_mfa (
  user_id bigint PRIMARY KEY REFERENCES users (id),
  secret_enc bytea NOT NULL,
  key_id text NOT NULL,
  enabled_at timestamptz,
  last_step bigint NOT NULL DEFAULT 0 CHECK (last_step >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_mfa_key_idx ON user_mfa (key_id);

-- Single-use recovery codes, stored as SHA-256 digests (each code carries 80 random bits).
CREATE TABLE user_mfa_recovery_codes (
  user_id bigint NOT NULL REFERENCES users (id),
  code_hash bytea NOT NULL CHECK (octet_length(code_hash) = 32),
  used_at timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- An organisation that requires its administrators to sign in with a second factor.
ALTER TABLE organisations ADD COLUMN require_mfa boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE organisations DROP COLUMN require_mfa;
DROP TABLE user_mfa_recovery_codes;
DROP TABLE user_mfa;
