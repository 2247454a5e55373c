-- Up Migration
-- An organisation may require liveness (docs/liveness.md): a face match with a plain selfie is then
-- refused (422 liveness_required), so every face result it acts on was checked live. Default false:
-- organisations that match selfies today go on doing so.
ALTER TABLE organisations ADD COLUMN require_liveness boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE organisations DROP COLUMN require_liveness;
