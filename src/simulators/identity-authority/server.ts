import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { KNOWN_PHONE, personForDemography, personForNin, personForPhone, rawRecord, type SimPerson } from './persons.ts';

/**
 * The identity-authority simulator ("sandbox" dialect). README.md in this folder is the API
 * description; the fault rules there are binding for tests, keep both in step.
 */
export interface IdentitySimulatorOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Added before every answer. */
  latencyMs?: number;
  /** When set, every call needs `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** How long NINs starting 5002 are held before the simulator gives up on them. */
  hangMs?: number;
}

export interface IdentitySimulator {
  url: string;
  close(): Promise<void>;
  stats(): { calls: number };
}

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

export async function startIdentitySimulator(opts: IdentitySimulatorOptions = {}): Promise<IdentitySimulator> {
  const host = opts.host ?? '127.0.0.1';
  const latencyMs = opts.latencyMs ?? 0;
  const hangMs = opts.hangMs ?? 60_000;
  let calls = 0;
  // Per-NIN call counts for the "503 twice, then succeed" rule.
  const flakyCalls = new Map<string, number>();
  // Pending latency and hang timers, cleared on close() so the process can exit at once.
  const timers = new Set<NodeJS.Timeout>();

  function later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  }

  const app = express();
  app.disable('x-powered-by');

  app.use((req: Request, res: Response, next: NextFunction) => {
    calls += 1;
    if (latencyMs <= 0) return next();
    const t = later(latencyMs, next);
    res.on('close', () => {
      clearTimeout(t);
      timers.delete(t);
    });
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    if (opts.apiKey !== undefined && opts.apiKey !== '' && req.get('authorization') !== `Bearer ${opts.apiKey}`) {
      res.status(401).json({ status: false, message: 'Invalid or missing API key' });
      return;
    }
    next();
  });

  app.use(express.json({ limit: '16kb' }));

  function found(res: Response, person: SimPerson): void {
    res.status(200).json({ status: true, data: rawRecord(person, transactionId()) });
  }

  function notFound(res: Response): void {
    res.status(404).json({ status: false, message: 'Record not found' });
  }

  app.post('/v1/nin', (req: Request, res: Response) => {
    const body = ninBody.safeParse(req.body);
    if (!body.success) return badRequest(res, body.error);
    const { nin } = body.data;

    if (nin.startsWith('5000')) {
      const n = (flakyCalls.get(nin) ?? 0) + 1;
      flakyCalls.set(nin, n);
      if (n <= 2) {
        res.status(503).json({ status: false, message: 'Service temporarily unavailable' });
        return;
      }
    } else if (nin.startsWith('5001')) {
      res.status(503).json({ status: false, message: 'Service temporarily unavailable' });
      return;
    } else if (nin.startsWith('5002')) {
      const t = later(hangMs, () => {
        if (!res.headersSent) res.status(504).json({ status: false, message: 'Upstream timeout' });
      });
      res.on('close', () => {
        clearTimeout(t);
        timers.delete(t);
      });
      return;
    } else if (nin.startsWith('5003')) {
      res.status(429).set('Retry-After', '1').json({ status: false, message: 'Too many requests' });
      return;
    }

    if (nin.startsWith('0')) return notFound(res);
    found(res, personForNin(nin));
  });

  app.post('/v1/phone', (req: Request, res: Response) => {
    const body = phoneBody.safeParse(req.body);
    if (!body.success) return badRequest(res, body.error);
    if (!KNOWN_PHONE.test(body.data.phone)) return notFound(res);
    found(res, personForPhone(body.data.phone));
  });

  app.post('/v1/demography', (req: Request, res: Response) => {
    const body = demographyBody.safeParse(req.body);
    if (!body.success) return badRequest(res, body.error);
    const q = body.data;
    if (/^z/i.test(q.lastname)) return notFound(res);
    const [day, month, year] = q.dob.split('-').map(Number) as [number, number, number];
    const gender = q.gender.toLowerCase() === 'f' ? 'f' : 'm';
    found(res, personForDemography({ firstName: q.firstname, lastName: q.lastname, dob: { day, month, year }, gender }));
  });

  app.get('/v1/reasons', (_req: Request, res: Response) => {
    res.status(200).json({ data: SIM_REASONS });
  });

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ status: false, message: 'No such endpoint' });
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' ? err.status : 500;
    if (res.headersSent) return;
    if (status >= 400 && status < 500) res.status(status).json({ status: false, message: 'Malformed request body' });
    else res.status(500).json({ status: false, message: 'Internal error', id: randomUUID() });
  });

  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    stats: () => ({ calls }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close((err) => (err ? reject(err) : resolve()));
        // Held (5002) and keep-alive connections would otherwise keep close() waiting.
        server.closeAllConnections();
      }),
  };
}
