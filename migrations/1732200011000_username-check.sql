-- Up Migration

-- New usernames are NFKC-normalised and refused when they hold control, bidirectional or invisible
-- characters or mix Latin with Cyrillic or Greek letters (src/modules/organisations/usernames.ts).
-- Existing rows are reported, never changed: their owners sign in with them. This check counts them
-- and names their ids in a WARNING (the release step logs it); `npm run admin -- user:check-names`
-- lists each one with the rules it breaks. Script ranges: Latin letters (Basic, Latin-1, Extended-A/B,
-- Additional), Cyrillic (and Supplement, Extended), Greek (and Extended).
DO $$
DECLARE
  found bigint[];
BEGIN
  -- NFKC and the code-point ranges need a UTF-8 database; elsewhere the CLI report alone applies.
  IF current_setting('server_encoding') <> 'UTF8' THEN
    RAISE WARNING 'username check skipped (database encoding is not UTF8): run `npm run admin -- user:check-names`';
    RETURN;
  END IF;
  SELECT array_agg(id ORDER BY id) INTO found FROM (
    SELECT id FROM users
    WHERE username ~ '[[:cntrl:]]'
       OR username ~ '[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u00ad]'
       OR username IS NOT NFKC NORMALIZED
       OR ((username ~ '[a-z\u00c0-\u024f\u1e00-\u1eff]')::int
         + (username ~ '[\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f]')::int
         + (username ~ '[\u0370-\u03ff\u1f00-\u1fff]')::int) > 1
  ) AS bad;
  IF found IS NOT NULL THEN
    RAISE WARNING '% existing username(s) break the username rules and are kept as they are (user ids %); run `npm run admin -- user:check-names` for the rules each breaks',
      cardinality(found), array_to_string(found[1:50], ', ');
  END IF;
END;
$$;

-- Down Migration
