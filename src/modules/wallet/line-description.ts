import { sql, type FragmentSqlToken } from 'slonik';

/**
 * Why a line of the wallet costs what it costs, in words: the ledger's `description` (JSON and CSV,
 * the CSV built by PostgreSQL while it streams) and the statement's verification lines. The words are
 * written once here, as templates; `fill` reads them for the code and `templateSql` turns the same
 * template into a SQL expression, so the two cannot drift (test/finance/ledger-descriptions.test.ts
 * compares a JSON page with the CSV of the same lines).
 *
 * Where the face units come from: a face match is a lookup (its `verification` line, 1 unit) and,
 * once the faces were compared, a `face_match` line of FACE_MATCH_UNITS - 1 units. A face match whose
 * faces were not compared (a selfie refused, the comparison not made) costs the lookup alone.
 */
const FACE_COST = 'face match ({total} units: lookup {lookup} + face {face})';
export const TEMPLATES = {
  lookup: '{mode} verification (1 unit)',
  faceCost: FACE_COST,
  faceCompared: `NIN verification with ${FACE_COST}`,
  faceLookupShare: ': the lookup\'s {lookup}',
  faceShare: ': the face comparison\'s {face}',
  faceNotCompared: 'NIN verification with face match, faces not compared ({lookup} unit: lookup only)',
  fixture: 'Test-mode {mode} verification (free)',
  topup: 'Top-up of {units} units',
  topupBonus: 'Top-up of {units} units + {bonus} bonus',
  adjustment: 'Adjustment: {note}',
  adjustmentBare: 'Adjustment',
} as const;
type Template = (typeof TEMPLATES)[keyof typeof TEMPLATES];

/** How each verification mode is named (the `mode` the ledger line's details carry). */
export const MODE_NAMES: Readonly<Record<string, string>> = {
  nin: 'NIN',
  vnin: 'Virtual NIN',
  phone: 'Phone number',
  demography: 'Demographic',
  match: 'NIN match',
  face: 'NIN',
};
const UNKNOWN_MODE = 'Identity';

/** A template with its `{names}` replaced by the values. */
export function fill(t: Template, values: Record<string, string | number>): string {
  return t.replace(/\{(\w+)\}/g, (_, k: string) => String(values[k]));
}

/** The same template as a SQL text expression, each `{name}` the fragment given for it. */
export function templateSql(t: Template, values: Record<string, FragmentSqlToken>): FragmentSqlToken {
  const parts = t.split(/\{(\w+)\}/);
  // split with a capture group alternates text, name, text, ...
  const pieces = parts.map((p, i) => (i % 2 === 0 ? sql.fragment`${p}::text` : sql.fragment`(${values[p]!})::text`));
  return sql.fragment`(${sql.join(pieces, sql.fragment` || `)})`;
}

/** The mode's name, in SQL, from a details jsonb expression. */
function modeSql(details: FragmentSqlToken): FragmentSqlToken {
  const cases = Object.entries(MODE_NAMES).map(([mode, name]) => sql.fragment`WHEN ${mode} THEN ${name}::text`);
  return sql.fragment`(CASE ${details}->>'mode' ${sql.join(cases, sql.fragment` `)} ELSE ${UNKNOWN_MODE}::text END)`;
}

/**
 * A ledger line's description as SQL, for a query over `wallet_transactions t`. A face match's lines
 * (its lookup's and its comparison's) each read the other by the reference (one unique index each).
 */
export function ledgerDescriptionSql(): FragmentSqlToken {
  const lookup = sql.fragment`(SELECT -x.units_delta FROM wallet_transactions x WHERE x.kind = 'verification' AND x.reference = t.reference AND x.org_id = t.org_id)`;
  const face = sql.fragment`(SELECT -x.units_delta FROM wallet_transactions x WHERE x.kind = 'face_match' AND x.reference = t.reference AND x.org_id = t.org_id)`;
  const compared = templateSql(TEMPLATES.faceCompared, { total: sql.fragment`${lookup} + ${face}`, lookup, face });
  const mode = modeSql(sql.fragment`t.details`);
  return sql.fragment`(CASE
    WHEN t.kind = 'verification' AND t.details->>'mode' = 'face' THEN
      CASE WHEN ${face} IS NULL THEN ${templateSql(TEMPLATES.faceNotCompared, { lookup: sql.fragment`-t.units_delta` })}
           ELSE ${compared} || ${templateSql(TEMPLATES.faceLookupShare, { lookup: sql.fragment`-t.units_delta` })} END
    WHEN t.kind = 'face_match' THEN ${compared} || ${templateSql(TEMPLATES.faceShare, { face: sql.fragment`-t.units_delta` })}
    WHEN t.kind = 'verification' THEN ${templateSql(TEMPLATES.lookup, { mode })}
    WHEN t.kind = 'fixture_verification' THEN ${templateSql(TEMPLATES.fixture, { mode })}
    WHEN t.kind = 'topup' AND coalesce((t.details->>'bonus_units')::bigint, 0) > 0 THEN
      ${templateSql(TEMPLATES.topupBonus, { units: sql.fragment`coalesce((t.details->>'units')::bigint, t.units_delta)`, bonus: sql.fragment`(t.details->>'bonus_units')::bigint` })}
    WHEN t.kind = 'topup' THEN ${templateSql(TEMPLATES.topup, { units: sql.fragment`coalesce((t.details->>'units')::bigint, t.units_delta)` })}
    WHEN t.kind = 'adjustment' AND coalesce(t.details->>'note', '') <> '' THEN ${templateSql(TEMPLATES.adjustment, { note: sql.fragment`t.details->>'note'` })}
    ELSE ${TEMPLATES.adjustmentBare}::text END)`;
}

/**
 * What a statement's run of verifications says about its face matches: how many, and what one costs
 * when every one in the run cost the same (the usual case: FACE_MATCH_UNITS changes rarely).
 */
export function faceMatchesNote(faceMatches: number, faceUnits: number): string {
  if (faceMatches === 0) return '';
  const each = faceUnits / faceMatches;
  // Each compared face match has one lookup (1 unit) beside its face_match line.
  const cost = Number.isInteger(each) ? fill(TEMPLATES.faceCost, { total: 1 + each, lookup: 1, face: each }) : `face match (lookup 1 each + face ${faceUnits} units in all)`;
  return `${faceMatches} with ${cost}${faceMatches === 1 || !Number.isInteger(each) ? '' : ' each'}`;
}
