-- Up Migration
-- A waiting batch lookup of a NIN keeps the subject hash of that NIN (HMAC-SHA256 with
-- SUBJECT_HASH_KEY, as verifications do) while it waits, so that subject:export lists it and
-- subject:erase cancels it; it goes with the sealed query once the lookup is queued (its verification
-- has its own) or cancelled. Lookups that waited before this column existed are hashed by the subject
-- commands themselves (the key is not the database's). Nullable column, no rewrite; the checks are
-- added NOT VALID and then validated, so the scan does not hold the table's exclusive lock.
ALTER TABLE batch_lookups ADD COLUMN subject_hash bytea;
ALTER TABLE batch_lookups ADD CONSTRAINT batch_lookups_subject_hash_length CHECK (length(subject_hash) = 32) NOT VALID;
ALTER TABLE batch_lookups VALIDATE CONSTRAINT batch_lookups_subject_hash_length;
ALTER TABLE batch_lookups ADD CONSTRAINT batch_lookups_subject_while_waiting CHECK (state = 'waiting' OR subject_hash IS NULL) NOT VALID;
ALTER TABLE batch_lookups VALIDATE CONSTRAINT batch_lookups_subject_while_waiting;
CREATE INDEX batch_lookups_subject_idx ON batch_lookups (subject_hash) WHERE subject_hash IS NOT NULL;

-- Down Migration
DROP INDEX IF EXISTS batch_lookups_subject_idx;
ALTER TABLE batch_lookups DROP COLUMN subject_hash;
