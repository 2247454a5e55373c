import { sql, type FragmentSqlToken } from 'slonik';

/**
 * A rule written once and read two ways: by `failing` (the code's decision) and by `ruleSql` (the
 * same decision as SQL, for a statement that must carry it for speed). The language is only what the
 * rules that need it use: a field's truth, null, equality, membership, emptiness and "after, to the
 * millisecond". Every operator has one meaning in both languages, NULL included (SQL's three-valued
 * logic never leaks: each comparison is closed with IS TRUE or IS NOT DISTINCT FROM), and
 * test/api/rule-sql-agrees-with-code.test.ts checks the two against real PostgreSQL with generated inputs.
 *
 * A rule is a list of named checks: the code answers the first that fails (so each keeps its own
 * refusal), the SQL is their conjunction.
 */
export type Pred =
  | { op: 'is'; field: string }
  | { op: 'null'; field: string }
  | { op: 'eq'; field: string; other: string }
  | { op: 'eqConst'; field: string; value: string }
  | { op: 'in'; field: string; list: string }
  | { op: 'empty'; field: string }
  | { op: 'after'; field: string; instant: string }
  | { op: 'not'; of: Pred }
  | { op: 'and' | 'or'; of: Pred[] };

/** A boolean field is true (null and false are not). */
export const is = (field: string): Pred => ({ op: 'is', field });
export const isNull = (field: string): Pred => ({ op: 'null', field });
/** Equal, null equal to null (the code's `===`; SQL's IS NOT DISTINCT FROM). */
export const eq = (field: string, other: string): Pred => ({ op: 'eq', field, other });
export const eqConst = (field: string, value: string): Pred => ({ op: 'eqConst', field, value });
/** A non-null text field is one of a list field's. */
export const isIn = (field: string, list: string): Pred => ({ op: 'in', field, list });
/** An array field is null or has no element. */
export const empty = (field: string): Pred => ({ op: 'empty', field });
/** A timestamp field, truncated to the millisecond (what a JavaScript Date keeps), is later than an instant. */
export const after = (field: string, instant: string): Pred => ({ op: 'after', field, instant });
export const not = (of: Pred): Pred => ({ op: 'not', of });
export const and = (...of: Pred[]): Pred => ({ op: 'and', of });
export const or = (...of: Pred[]): Pred => ({ op: 'or', of });
/** `when` implies `then`: a check that binds only some rows (an API client's, a person's). */
export const when = (cond: Pred, then: Pred): Pred => or(not(cond), then);

export type Rule<C extends string> = readonly { name: C; holds: Pred }[];
export const rule = <C extends string>(checks: Record<C, Pred>): Rule<C> => (Object.keys(checks) as C[]).map((name) => ({ name, holds: checks[name] }));

/** The values of a rule's fields, as the code has them (undefined reads as null). */
export type Values = Record<string, unknown>;

const isNullish = (v: unknown) => v === null || v === undefined;
const instant = (v: unknown): number => (v instanceof Date ? v.getTime() : new Date(v as string | number).getTime());

export function holds(p: Pred, v: Values): boolean {
  switch (p.op) {
    case 'is':
      return v[p.field] === true;
    case 'null':
      return isNullish(v[p.field]);
    case 'eq':
      return isNullish(v[p.field]) ? isNullish(v[p.other]) : v[p.field] === v[p.other];
    case 'eqConst':
      return v[p.field] === p.value;
    case 'in': {
      const list = v[p.list] as readonly unknown[] | null | undefined;
      return !isNullish(v[p.field]) && !!list && list.includes(v[p.field]);
    }
    case 'empty': {
      const list = v[p.field] as readonly unknown[] | null | undefined;
      return !list || list.length === 0;
    }
    case 'after':
      return !isNullish(v[p.field]) && !isNullish(v[p.instant]) && Math.trunc(instant(v[p.field])) > instant(v[p.instant]);
    case 'not':
      return !holds(p.of, v);
    case 'and':
      return p.of.every((q) => holds(q, v));
    case 'or':
      return p.of.some((q) => holds(q, v));
  }
}

/** The first check that fails, or null when the rule holds. */
export function failing<C extends string>(r: Rule<C>, v: Values): C | null {
  for (const c of r) if (!holds(c.holds, v)) return c.name;
  return null;
}

/** Every check that fails, in the rule's order (empty when the rule holds): a decision that lists all its reasons. */
export function allFailing<C extends string>(r: Rule<C>, v: Values): C[] {
  return r.filter((c) => !holds(c.holds, v)).map((c) => c.name);
}

/**
 * How a statement reads each field: an SQL expression of the field's type (boolean, int8, text,
 * timestamptz or an array), `{ jsonArray }` for an array read from JSON (null, or any other JSON
 * value than an array, reads as empty), or `unsure` for a field only the code knows (a caller's
 * address). An unsure field reads as false, and may only appear where false narrows the rule (under
 * an even number of NOTs): the statement then holds only where the code would whatever the field is.
 */
export type Binding = Record<string, FragmentSqlToken | 'unsure' | { jsonArray: FragmentSqlToken }>;
export const UNSURE = 'unsure' as const;

/** The rule as one SQL boolean expression (never NULL) over the binding's expressions. */
export function ruleSql(r: Rule<string>, b: Binding): FragmentSqlToken {
  return sql.fragment`(${sql.join(r.map((c) => sql.fragment`(${predSql(c.holds, b, true)})`), sql.fragment` AND `)})`;
}

function predSql(p: Pred, b: Binding, positive: boolean): FragmentSqlToken {
  const f = (name: string) => {
    const e = b[name];
    if (e === undefined) throw new Error(`rule: no binding for the field ${name}`);
    if (e === UNSURE) throw new Error(`rule: the field ${name} is unsure in SQL and may only be asked whether it is true`);
    if ('jsonArray' in e) throw new Error(`rule: the JSON field ${name} may only be asked whether it is empty`);
    return e;
  };
  switch (p.op) {
    case 'is':
      if (b[p.field] === UNSURE) {
        if (!positive) throw new Error(`rule: the unsure field ${p.field} under a NOT would widen the SQL`);
        return sql.fragment`false`;
      }
      return sql.fragment`(${f(p.field)}) IS TRUE`;
    case 'null':
      return sql.fragment`(${f(p.field)}) IS NULL`;
    case 'eq':
      return sql.fragment`(${f(p.field)}) IS NOT DISTINCT FROM (${f(p.other)})`;
    case 'eqConst':
      return sql.fragment`(${f(p.field)}) IS NOT DISTINCT FROM ${p.value}::text`;
    case 'in':
      return sql.fragment`(${f(p.field)} = ANY(${f(p.list)})) IS TRUE`;
    case 'empty': {
      const e = b[p.field];
      if (e !== undefined && e !== UNSURE && 'jsonArray' in e) return sql.fragment`coalesce(json_array_length(CASE WHEN json_typeof(${e.jsonArray}) = 'array' THEN ${e.jsonArray} END), 0) = 0`;
      return sql.fragment`coalesce(cardinality(${f(p.field)}), 0) = 0`;
    }
    case 'after':
      return sql.fragment`(date_trunc('milliseconds', ${f(p.field)}) > ${f(p.instant)}) IS TRUE`;
    case 'not':
      return sql.fragment`NOT (${predSql(p.of, b, !positive)})`;
    case 'and':
    case 'or': {
      if (p.of.length === 0) return p.op === 'and' ? sql.fragment`true` : sql.fragment`false`;
      const parts = p.of.map((q) => sql.fragment`(${predSql(q, b, positive)})`);
      return sql.fragment`${sql.join(parts, p.op === 'and' ? sql.fragment` AND ` : sql.fragment` OR `)}`;
    }
  }
}
