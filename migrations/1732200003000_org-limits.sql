-- Up Migration
-- Per-organisation cap on live lookups in flight; NULL means the service default (ORG_MAX_IN_FLIGHT).
-- Adding a nullable column with no default is a catalogue-only change: no table rewrite, no long lock.
ALTER TABLE organisations
  ADD COLUMN max_in_flight integer CHECK (max_in_flight IS NULL OR max_in_flight BETWEEN 1 AND 100000);

-- Down Migration
ALTER TABLE organisations DROP COLUMN max_in_flight;
