-- Up Migration
-- Test pings are capped per endpoint (PINGS_PER_HOUR within an hour, then 429 `ping_limit`). The
-- check reads the organisation's pings of the last hour (at most the cap times its endpoints) and
-- joins each to the endpoint's delivery through webhook_deliveries_once: a partial index on pings alone.
CREATE INDEX webhook_events_pings ON webhook_events (org_id, created_at) WHERE type = 'ping';

-- Down Migration
DROP INDEX webhook_events_pings;
