-- Up Migration
-- The finance role (src/lib/roles.ts): a user or an API client of an organisation that pays and reads
-- the money. The role CHECKs list every role of the table; an API client holding the topup scope may be
-- an administrator or a finance client (both keep the accounts).
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('org_admin', 'member', 'finance', 'platform_admin'));
ALTER TABLE api_clients DROP CONSTRAINT api_clients_role_check;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_role_check CHECK (role IN ('org_admin', 'member', 'finance'));
ALTER TABLE api_clients DROP CONSTRAINT api_clients_topup_needs_admin;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_topup_needs_admin CHECK (scopes IS NULL OR role IN ('org_admin', 'finance') OR NOT ('topup' = ANY (scopes)));

-- Down Migration
ALTER TABLE api_clients DROP CONSTRAINT api_clients_topup_needs_admin;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_topup_needs_admin CHECK (scopes IS NULL OR role = 'org_admin' OR NOT ('topup' = ANY (scopes)));
ALTER TABLE api_clients DROP CONSTRAINT api_clients_role_check;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_role_check CHECK (role IN ('org_admin', 'member'));
ALTER TABLE users DROP CONSTRAINT users_role_check;
ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('org_admin', 'member', 'platform_admin'));
