-- Up Migration
-- A username is held only by a user: an open invitation no longer holds its username against every
-- other organisation (for 72 hours, renewable). Two organisations may invite the same username; the
-- first acceptance makes the user, and users' own unique index on username decides between two
-- acceptances at the same moment (the second waits on the first's insert, then fails, and is answered
-- 409 in its own transaction). One open invitation per username within one organisation remains: a
-- second there would only race the first.
DROP INDEX invitations_one_open_username;
CREATE UNIQUE INDEX invitations_one_open_username_per_org ON invitations (org_id, username) WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Down Migration
-- Fails when two organisations hold open invitations for one username: revoke one of them first.
DROP INDEX invitations_one_open_username_per_org;
CREATE UNIQUE INDEX invitations_one_open_username ON invitations (username) WHERE accepted_at IS NULL AND revoked_at IS NULL;
