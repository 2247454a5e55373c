-- Up Migration
-- Turning two-factor sign-in on or off, and spending a recovery code, end every earlier token of the
-- user, as a password change does (users.token_version, read by every request). Here in the schema,
-- like users_token_version, so that no code path (the API, an operator's user:mfa-reset) forgets it.
-- A recovery code is spent by someone who lost the authenticator: whoever else holds a session may
-- be the reason why.
CREATE FUNCTION user_mfa_end_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE users SET token_version = token_version + 1 WHERE id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END);
  RETURN NULL;
END;
$$;
CREATE TRIGGER user_mfa_turned_on AFTER UPDATE OF enabled_at ON user_mfa
  FOR EACH ROW WHEN (OLD.enabled_at IS NULL AND NEW.enabled_at IS NOT NULL) EXECUTE FUNCTION user_mfa_end_sessions();
CREATE TRIGGER user_mfa_turned_off AFTER DELETE ON user_mfa
  FOR EACH ROW WHEN (OLD.enabled_at IS NOT NULL) EXECUTE FUNCTION user_mfa_end_sessions();
CREATE TRIGGER user_mfa_recovery_code_spent AFTER UPDATE OF used_at ON user_mfa_recovery_codes
  FOR EACH ROW WHEN (OLD.used_at IS NULL AND NEW.used_at IS NOT NULL) EXECUTE FUNCTION user_mfa_end_sessions();

-- Down Migration
DROP TRIGGER user_mfa_recovery_code_spent ON user_mfa_recovery_codes;
DROP TRIGGER user_mfa_turned_off ON user_mfa;
DROP TRIGGER user_mfa_turned_on ON user_mfa;
DROP FUNCTION user_mfa_end_sessions();
