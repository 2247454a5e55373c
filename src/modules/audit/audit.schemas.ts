import { z } from 'zod';
import { cursorParam, timeBoundParam, limitParam } from '../../lib/pagination.ts';
import { AUDIT_ACTIONS } from './actions.ts';

/** The filters of GET /audit-events, JSON and CSV alike. */
export const auditFilters = z.object({
  action: z.enum(AUDIT_ACTIONS, `action must be one of ${AUDIT_ACTIONS.join(', ')}`).optional(),
  from: timeBoundParam('from').optional(),
  to: timeBoundParam('to').optional(),
});
export type AuditFilters = z.infer<typeof auditFilters>;

export const auditPageQuery = auditFilters.extend({ limit: limitParam, cursor: cursorParam });

/** The published shape of an event; its field order is the CSV's column order. */
export const auditEvent = z.object({
  id: z.number().int().meta({ description: 'Position in the chain; higher is newer' }),
  at: z.string().meta({ description: 'ISO 8601, UTC', example: '2026-03-01T09:30:00.000Z' }),
  org_id: z.number().int().nullable(),
  actor: z.string().meta({ description: '`user:<id>`, `client:<client_id>`, `system`, `operator` or `anonymous`', example: 'user:12' }),
  action: z.enum(AUDIT_ACTIONS).meta({ description: 'What was done, `<area>.<verb>`' }),
  target: z.string().nullable().meta({ description: 'What it was done to, by id or reference', example: 'REF-7K2M9Q4X1B3C' }),
  request_id: z.string().nullable().meta({ description: 'X-Request-Id of the request that did it; null for jobs and commands' }),
  ip: z.string().nullable().meta({ description: 'Source address, as the sign-in guard sees it behind TRUST_PROXY' }),
  details: z.record(z.string(), z.unknown()).meta({ description: 'Ids, counts and setting names; never personal data' }),
  hash: z.string().meta({ description: 'SHA-256 (hex) over the previous event hash and this event; audit:verify recomputes the chain' }),
});
export type AuditEventJson = z.infer<typeof auditEvent>;

export const AUDIT_CSV_COLUMNS = Object.keys(auditEvent.shape) as (keyof AuditEventJson)[];
