-- Up Migration
-- Liveness sessions: the head poses a person is asked for, in an order drawn on the server. A session
-- is open until it expires or is judged; once judged it is passed or failed, and a passed session
-- becomes used when the face match it belongs to takes it. `expired` is not stored: an open session
-- past expires_at is expired (so no sweeper has to run for the status to be right).
CREATE TABLE liveness_sessions (
  id text PRIMARY KEY CHECK (id ~ '^lvs_[0-9a-f]{24}$'),
  org_id bigint NOT NULL REFERENCES organisations (id),
  -- turn_left, turn_right and look_up, each exactly once.
  challenges text[] NOT NULL CHECK (
    cardinality(challenges) = 3
    AND challenges @> ARRAY['turn_left', 'turn_right', 'look_up']::text[]
  ),
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'passed', 'failed', 'used')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL CHECK (expires_at > created_at),
  judged_at timestamptz,
  -- The judgement (statuses, reasons, per-step yaw and pitch): never a frame or a landmark.
  result jsonb,
  CHECK ((status = 'open') = (judged_at IS NULL)),
  CHECK ((status = 'open') = (result IS NULL))
);
-- The open sessions an organisation holds are counted on every new one (LIVENESS_OPEN_SESSIONS_PER_ORG).
CREATE INDEX liveness_sessions_open ON liveness_sessions (org_id, expires_at) WHERE status = 'open';
CREATE INDEX liveness_sessions_expiry ON liveness_sessions (expires_at);

-- Keyed hashes (HMAC-SHA-256) of the frames judged, so that a frame sent again, by any organisation,
-- is told apart; the frame itself is never kept. Removed once expired (LIVENESS_FRAME_HASH_DAYS).
CREATE TABLE liveness_frame_hashes (
  hash bytea PRIMARY KEY CHECK (length(hash) = 32),
  expires_at timestamptz NOT NULL
);
CREATE INDEX liveness_frame_hashes_expiry ON liveness_frame_hashes (expires_at);

-- Down Migration
DROP TABLE liveness_frame_hashes;
DROP TABLE liveness_sessions;
