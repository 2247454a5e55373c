-- Up Migration
-- A verification link's submission survives a crash (issue 33): its row is recorded `pending` in the
-- statement that takes the link's use, under the reference its verification will then run under,
-- and moves to its end afterwards (by the page, or by the links sweep when the page's process
-- stopped first). A submission that stopped before any verification was recorded ends `abandoned`.
-- So the row comes before its verification, and an abandoned one never has one: the reference is no
-- longer a foreign key, only a reference's shape.
ALTER TABLE verification_link_submissions DROP CONSTRAINT verification_link_submissions_reference_id_fkey;
ALTER TABLE verification_link_submissions ADD CONSTRAINT verification_link_submissions_reference_shape CHECK (reference_id ~ '^REF-[A-Z0-9]{12}$');
ALTER TABLE verification_link_submissions DROP CONSTRAINT verification_link_submissions_status_check;
ALTER TABLE verification_link_submissions ADD CONSTRAINT verification_link_submissions_status_check
  CHECK (status IN ('pending', 'found', 'not_found', 'failed', 'refused', 'abandoned'));
-- Until it ends there is no outcome to name, and an abandoned one has none.
ALTER TABLE verification_link_submissions ADD CONSTRAINT verification_link_submissions_code_once_ended
  CHECK (status NOT IN ('pending', 'abandoned') OR code IS NULL);
-- The links sweep's question: pending submissions, oldest first.
CREATE INDEX verification_link_submissions_pending_idx ON verification_link_submissions (submitted_at) WHERE status = 'pending';

-- Down Migration
-- Back to rows only for recorded verifications: a pending one reads as the page used to record a
-- verification still running (`failed`, `verification_pending`, its use kept); an abandoned one, or
-- one whose verification was never recorded, goes (its use was given back, or is given back here).
UPDATE verification_links l SET uses = greatest(0, l.uses - lost.n)
  FROM (SELECT s.link_id, count(*) AS n FROM verification_link_submissions s
        WHERE s.status = 'pending' AND NOT EXISTS (SELECT 1 FROM verifications v WHERE v.reference_id = s.reference_id)
        GROUP BY s.link_id) lost
  WHERE lost.link_id = l.id;
DELETE FROM verification_link_submissions s
  WHERE s.status = 'abandoned' OR NOT EXISTS (SELECT 1 FROM verifications v WHERE v.reference_id = s.reference_id);
UPDATE verification_link_submissions SET status = 'failed', code = 'verification_pending' WHERE status = 'pending';
DROP INDEX verification_link_submissions_pending_idx;
ALTER TABLE verification_link_submissions DROP CONSTRAINT verification_link_submissions_code_once_ended;
ALTER TABLE verification_link_submissions DROP CONSTRAINT verification_link_submissions_status_check;
ALTER TABLE verification_link_submissions ADD CONSTRAINT verification_link_submissions_status_check CHECK (status IN ('found', 'not_found', 'failed', 'refused'));
ALTER TABLE verification_link_submissions DROP CONSTRAINT verification_link_submissions_reference_shape;
ALTER TABLE verification_link_submissions ADD CONSTRAINT verification_link_submissions_reference_id_fkey FOREIGN KEY (reference_id) REFERENCES verifications (reference_id);
