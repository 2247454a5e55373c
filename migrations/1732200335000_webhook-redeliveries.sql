-- Up Migration
-- Issue 32: manual redeliveries are capped per event and endpoint (a pending one, or
-- REDELIVERIES_PER_HOUR within an hour, answers 429). The check reads an event's redeliveries to an
-- endpoint; they are few (asked for by hand), so a partial index on them alone.
CREATE INDEX webhook_redeliveries ON webhook_deliveries (endpoint_id, event_id, created_at) WHERE redelivery_of IS NOT NULL;

-- Down Migration
DROP INDEX webhook_redeliveries;
