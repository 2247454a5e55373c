-- Up Migration

-- Who disabled a user: an operator (`user:disable`, retiring the organisation) or an organisation
-- administrator (PATCH /team/{id}). Only an operator may enable a user an operator disabled. Users
-- disabled before this column existed are taken as disabled by an operator: the cautious reading,
-- since an operator can still enable them.
ALTER TABLE users ADD COLUMN disabled_by text CHECK (disabled_by IN ('operator', 'org_admin'));
UPDATE users SET disabled_by = 'operator' WHERE disabled;
ALTER TABLE users ADD CONSTRAINT users_disabled_by CHECK ((disabled_by IS NOT NULL) = disabled) NOT VALID;
ALTER TABLE users VALIDATE CONSTRAINT users_disabled_by;

-- A disabled user (retiring an organisation disables its users) keeps no usable reset token,
-- whichever code path disables them. Tokens outstanding today for such users are voided here.
CREATE FUNCTION users_void_resets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE password_resets SET used_at = now() WHERE user_id = NEW.id AND used_at IS NULL;
  RETURN NULL;
END;
$$;
CREATE TRIGGER users_void_resets AFTER UPDATE OF disabled ON users
  FOR EACH ROW WHEN (NEW.disabled AND NOT OLD.disabled) EXECUTE FUNCTION users_void_resets();
UPDATE password_resets r SET used_at = now()
FROM users u LEFT JOIN organisations o ON o.id = u.org_id
WHERE r.user_id = u.id AND r.used_at IS NULL AND (u.disabled OR o.deleted_at IS NOT NULL);

-- An API client's tokens carry this version (`ver`); adopting the client raises it, so tokens issued
-- before the adoption stay dead and the client signs in again with its secret.
ALTER TABLE api_clients ADD COLUMN token_version integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE api_clients DROP COLUMN token_version;
DROP TRIGGER users_void_resets ON users;
DROP FUNCTION users_void_resets();
ALTER TABLE users DROP CONSTRAINT users_disabled_by;
ALTER TABLE users DROP COLUMN disabled_by;
