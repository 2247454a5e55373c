import { randomBytes } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { latencyFor } from './latency.ts';
import { KNOWN_PHONE, personForDemography, personForNin, personForPhone, rawRecord, type SimPerson } from './persons.ts';
import type { SimSettings } from './settings.ts';
import type { Timers } from './timers.ts';

/**
 * The authority's endpoints: who exists, the fault NINs, and how long each answer takes.
 * README.md in this folder describes them; the fault rules there are binding for tests.
 */
export const SIM_REASONS = [
  { key: 'corporate', label: 'Corporate', description: 'Identity check by a registered organisation for its own customers or staff.' },
  { key: 'nyscCheck', label: 'NYSC check', description: 'Verification of a corps member for the National Youth Service Corps.' },
  { key: 'telecommunicationSimReg', label: 'SIM registration', description: 'Linking a SIM card to its owner for a telecommunications operator.' },
  { key: 'bankAccountOpening', label: 'Bank account opening', description: 'Know-your-customer check when a bank account is opened.' },
  { key: 'employmentScreening', label: 'Employment screening', description: 'Pre-employment identity check by an employer.' },
] as const;

const REASON_KEYS = new Set<string>(SIM_REASONS.map((r) => r.key));

const reason = z.string().refine((k) => REASON_KEYS.has(k), 'unknown reason');
const ninBody = z.object({ nin: z.string().regex(/^\d{11}$/), reason });
const phoneBody = z.object({ phone: z.string().regex(/^\+?\d{10,14}$/), reason });
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
function badRequest(res: Response, error: z.ZodError): void {
  const fields = [...new Set(error.issues.map((i) => i.path.join('.') || 'body'))];
  res.status(400).json({ status: false, message: `Invalid request: ${fields.join(', ')}` });
}

function transactionId(): string {
  return `SBX-${randomBytes(8).toString('hex').toUpperCase()}`;
}

function found(res: Response, person: SimPerson): void {
  res.status(200).json({ status: true, data: rawRecord(person, transactionId()) });
}

function notFound(res: Response): void {
  res.status(404).json({ status: false, message: 'Record not found' });
}

function unavailable(res: Response): void {
  res.status(503).json({ status: false, message: 'Service temporarily unavailable' });
}

export function authorityRoutes(deps: { settings: () => SimSettings; timers: Timers }): Router {
  const { timers } = deps;
  // Per-NIN call counts for the "503 twice, then succeed" rule.
  const flakyCalls = new Map<string, number>();
  const router = Router();

  /** A valid lookup's delay: its own draw when a distribution is set, else the fixed latency. */
  function lookupDelay(seed: string): number {
    const s = deps.settings();
    return s.latency ? latencyFor(seed, s.latency) : s.latencyMs;
  }

  function fixedDelay(): number {
    return deps.settings().latencyMs;
  }

  function ninAnswer(res: Response, nin: string): void {
    if (nin.startsWith('5000')) {
      const n = (flakyCalls.get(nin) ?? 0) + 1;
      flakyCalls.set(nin, n);
      if (n <= 2) return unavailable(res);
    } else if (nin.startsWith('5001')) {
      return unavailable(res);
    } else if (nin.startsWith('5002')) {
      const cancel = timers.later(deps.settings().hangMs, () => {
        if (!res.headersSent) res.status(504).json({ status: false, message: 'Upstream timeout' });
      });
      res.on('close', cancel);
      return;
    } else if (nin.startsWith('5003')) {
      res.status(429).set('Retry-After', '1').json({ status: false, message: 'Too many requests' });
      return;
    }
    if (nin.startsWith('0')) return notFound(res);
    found(res, personForNin(nin));
  }

  router.post('/v1/nin', (req: Request, res: Response) => {
    const body = ninBody.safeParse(req.body);
    if (!body.success) return timers.answerAfter(res, fixedDelay(), () => badRequest(res, body.error));
    const { nin } = body.data;
    timers.answerAfter(res, lookupDelay(`nin:${nin}`), () => ninAnswer(res, nin));
  });

  router.post('/v1/phone', (req: Request, res: Response) => {
    const body = phoneBody.safeParse(req.body);
    if (!body.success) return timers.answerAfter(res, fixedDelay(), () => badRequest(res, body.error));
    const { phone } = body.data;
    timers.answerAfter(res, lookupDelay(`phone:${phone}`), () => {
      if (!KNOWN_PHONE.test(phone)) return notFound(res);
      found(res, personForPhone(phone));
    });
  });

  router.post('/v1/demography', (req: Request, res: Response) => {
    const body = demographyBody.safeParse(req.body);
    if (!body.success) return timers.answerAfter(res, fixedDelay(), () => badRequest(res, body.error));
    const q = body.data;
    const [day, month, year] = q.dob.split('-').map(Number) as [number, number, number];
    const gender = q.gender.toLowerCase() === 'f' ? 'f' : 'm';
    const seed = `demography:${demographySeed(q.firstname, q.lastname, q.dob, gender)}`;
    timers.answerAfter(res, lookupDelay(seed), () => {
      if (/^z/i.test(q.lastname)) return notFound(res);
      found(res, personForDemography({ firstName: q.firstname, lastName: q.lastname, dob: { day, month, year }, gender }));
    });
  });

  router.get('/v1/reasons', (_req: Request, res: Response) => {
    timers.answerAfter(res, fixedDelay(), () => res.status(200).json({ data: SIM_REASONS }));
  });

  router.use((_req: Request, res: Response) => {
    timers.answerAfter(res, fixedDelay(), () => res.status(404).json({ status: false, message: 'No such endpoint' }));
  });

  return router;
}

/** The text a demographic query's latency is seeded from (names trimmed and lower-cased). */
export function demographySeed(firstName: string, lastName: string, dmy: string, gender: 'm' | 'f'): string {
  return [firstName.trim().toLowerCase(), lastName.trim().toLowerCase(), dmy, gender].join('|');
}
