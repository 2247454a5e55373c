import { randomBytes } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { lookupPath, type SimDialect } from './dialect.ts';
import type { Answers, Lookups } from './lookups.ts';
import { rawRecord } from './persons.ts';

export { demographySeed } from './lookups.ts';

/**
 * The "sandbox" dialect, our own API: POST /v1/nin, /v1/phone, /v1/demography, GET /v1/reasons,
 * Bearer key, `{ status, data | message }` bodies, records in four key variants. README.md in this
 * folder describes it; the rules there are binding for tests.
 */
export const SIM_REASONS = [
  { key: 'corporate', label: 'Corporate', description: 'Identity check by a registered organisation for its own customers or staff.' },
  { key: 'nyscCheck', label: 'NYSC check', description: 'Verification of a corps member for the National Youth Service Corps.' },
  { key: 'telecommunicationSimReg', label: 'SIM registration', description: 'Linking a SIM card to its owner for a telecommunications operator.' },
  { key: 'bankAccountOpening', label: 'Bank account opening', description: 'Know-your-customer check when a bank account is opened.' },
  { key: 'employmentScreening', label: 'Employment screening', description: 'Pre-employment identity check by an employer.' },
] as const;

const REASON_KEYS = new Set<string>(SIM_REASONS.map((r) => r.key));
const LOOKUP_PATHS = new Set(['/v1/nin', '/v1/vnin', '/v1/phone', '/v1/demography']);

const reason = z.string().refine((k) => REASON_KEYS.has(k), 'unknown reason');
const ninBody = z.object({ nin: z.string().regex(/^\d{11}$/), reason });
const phoneBody = z.object({ phone: z.string().regex(/^\+?\d{10,14}$/), reason });
const vninBody = z.object({ vnin: z.string().regex(/^[A-Za-z0-9]{16}$/), reason });

/** The sandbox's four vNIN refusals, each a 404 like its not-found (README.md lists them). */
export const SANDBOX_VNIN_REFUSALS = {
  not_found: 'vNIN not found',
  expired: 'vNIN expired',
  wrong_enterprise: 'vNIN issued for another enterprise',
  used: 'vNIN already used',
} as const;
const demographyBody = z.object({
  firstname: z.string().trim().min(1),
  lastname: z.string().trim().min(1),
  dob: z.string().regex(/^\d{2}-\d{2}-\d{4}$/).refine(isCalendarDate, 'not a date'),
  gender: z.enum(['m', 'f', 'M', 'F']),
  reason,
});

function isCalendarDate(dmy: string): boolean {
  const [day, month, year] = dmy.split('-').map(Number) as [number, number, number];
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

/** The message names fields only: request values are personal data. */
export function invalidFields(error: z.ZodError): string {
  return `Invalid request: ${[...new Set(error.issues.map((i) => i.path.join('.') || 'body'))].join(', ')}`;
}

function error(res: Response, status: number, message: string): void {
  res.status(status).json({ status: false, message });
}

function answers(res: Response): Answers {
  return {
    found: (person) => void res.status(200).json({ status: true, data: rawRecord(person, `SBX-${randomBytes(8).toString('hex').toUpperCase()}`) }),
    notFound: () => void res.status(404).json({ status: false, message: 'Record not found' }),
    refused: (status, message) => error(res, status, message),
    vninRefused: (why) => void res.status(404).json({ status: false, message: SANDBOX_VNIN_REFUSALS[why] }),
  };
}

function routes(lookups: Lookups): Router {
  const router = Router();
  const invalid = (res: Response, e: z.ZodError) => lookups.plain(res, () => error(res, 400, invalidFields(e)));

  router.post('/v1/nin', (req: Request, res: Response) => {
    const body = ninBody.safeParse(req.body);
    if (!body.success) return invalid(res, body.error);
    lookups.nin(res, body.data.nin, answers(res));
  });

  router.post('/v1/vnin', (req: Request, res: Response) => {
    const body = vninBody.safeParse(req.body);
    if (!body.success) return invalid(res, body.error);
    lookups.vnin(res, body.data.vnin, answers(res));
  });

  router.post('/v1/phone', (req: Request, res: Response) => {
    const body = phoneBody.safeParse(req.body);
    if (!body.success) return invalid(res, body.error);
    lookups.phone(res, body.data.phone, answers(res));
  });

  router.post('/v1/demography', (req: Request, res: Response) => {
    const body = demographyBody.safeParse(req.body);
    if (!body.success) return invalid(res, body.error);
    const q = body.data;
    const [day, month, year] = q.dob.split('-').map(Number) as [number, number, number];
    const gender = q.gender.toLowerCase() === 'f' ? 'f' : 'm';
    lookups.demography(res, { firstName: q.firstname, lastName: q.lastname, dob: { day, month, year }, gender }, answers(res));
  });

  router.get('/v1/reasons', (_req: Request, res: Response) => {
    lookups.plain(res, () => res.status(200).json({ data: SIM_REASONS }));
  });

  router.use((_req: Request, res: Response) => {
    lookups.plain(res, () => error(res, 404, 'No such endpoint'));
  });

  return router;
}

export const sandboxDialect: SimDialect = {
  name: 'sandbox',
  prefix: '',
  isLookup: (req) => req.method === 'POST' && LOOKUP_PATHS.has(lookupPath(req)),
  credential: (req) => req.get('authorization') ?? '',
  authorised: (req, c) => !c.apiKey || req.get('authorization') === `Bearer ${c.apiKey}`,
  error,
  routes,
};
