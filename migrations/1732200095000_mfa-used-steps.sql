-- Up Migration
-- Two-factor codes: each 30-second step's code is taken once (replay refused), and a code of the
-- previous or next step is accepted even after a later step was used (a phone a little behind, a
-- code typed as it changed). last_step alone refused every step at or below the last one used;
-- used_steps remembers the steps taken that a code could still match. The backfill marks the last
-- step and the two before it as used, which is exactly what last_step refused before (a code seen
-- just before the upgrade cannot be replayed after it); it touches only enrolled users' rows.
ALTER TABLE user_mfa ADD COLUMN used_steps bigint[] NOT NULL DEFAULT '{}';
UPDATE user_mfa SET used_steps = ARRAY[last_step - 2, last_step - 1, last_step] WHERE last_step > 0;

-- Down Migration
ALTER TABLE user_mfa DROP COLUMN used_steps;
