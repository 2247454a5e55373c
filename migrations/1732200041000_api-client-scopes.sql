-- Up Migration
-- What an API client may do, from where, and until when. NULL scopes: everything the client's role
-- allows (clients created before scopes existed); NULL or empty allowed_ips: any address; NULL
-- expires_at: never expires. Nullable without defaults: a catalogue-only change, no table rewrite.
ALTER TABLE api_clients
  ADD COLUMN scopes text[],
  ADD COLUMN allowed_ips text[],
  ADD COLUMN expires_at timestamptz;
ALTER TABLE api_clients
  ADD CONSTRAINT api_clients_scopes_known CHECK (scopes IS NULL OR (cardinality(scopes) > 0 AND scopes <@ ARRAY['verify', 'requery', 'history:read', 'topup']::text[])),
  -- Topping up spends the organisation's money: only an administrator client may hold the scope.
  ADD CONSTRAINT api_clients_topup_needs_admin CHECK (scopes IS NULL OR role = 'org_admin' OR NOT ('topup' = ANY (scopes)));

-- Down Migration
ALTER TABLE api_clients DROP CONSTRAINT api_clients_topup_needs_admin, DROP CONSTRAINT api_clients_scopes_known;
ALTER TABLE api_clients DROP COLUMN expires_at, DROP COLUMN allowed_ips, DROP COLUMN scopes;
