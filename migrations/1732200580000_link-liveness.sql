-- Up Migration
-- A link that asks for a face may ask for a liveness check with it (the page takes the frames of a
-- session's head poses in place of a selfie). Links made before keep their selfie: false.
ALTER TABLE verification_links ADD COLUMN liveness boolean NOT NULL DEFAULT false;
-- Liveness is part of the face match: never without one.
ALTER TABLE verification_links ADD CONSTRAINT verification_links_liveness_needs_face CHECK (NOT liveness OR require_face);

-- Down Migration
ALTER TABLE verification_links DROP CONSTRAINT verification_links_liveness_needs_face;
ALTER TABLE verification_links DROP COLUMN liveness;
