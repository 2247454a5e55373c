import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const time = z.union([z.number(), z.string(), z.date()]).transform((v) => new Date(v).toISOString());
const int = z.union([z.number(), z.bigint(), z.string()]).transform((v) => Number(v));

export const lastTopupRow = z.object({
  org_id: int,
  reference: z.string(),
  units: int,
  bonus_units: int,
  total_amount: int,
  paid_amount: int.nullable(),
  currency: z.string(),
  created_at: time,
  credited_at: time,
});
export type LastTopup = Omit<z.infer<typeof lastTopupRow>, 'org_id'>;

/**
 * Each organisation's most recent credited top-up (when it last bought units), in one query for a
 * page of organisations; an organisation that never topped up is absent from the map.
 */
export async function lastCreditedTopups(db: CommonQueryMethods, orgIds: readonly number[]): Promise<Map<number, LastTopup>> {
  const byOrg = new Map<number, LastTopup>();
  if (orgIds.length === 0) return byOrg;
  const rows = await db.any(sql.type(lastTopupRow)`
    SELECT DISTINCT ON (org_id) org_id, reference, units, bonus_units, total_amount, paid_amount, currency, created_at, credited_at
    FROM topups
    WHERE org_id = ANY(${sql.array([...orgIds], 'int8')}) AND status = 'credited'
    ORDER BY org_id, credited_at DESC, reference DESC`);
  for (const { org_id, ...last } of rows) byOrg.set(org_id, last);
  return byOrg;
}
