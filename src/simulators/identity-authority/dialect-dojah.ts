import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { invalidFields } from './behaviour.ts';
import { lookupPath, type SimDialect } from './dialect.ts';
import type { Answers, Lookups } from './lookups.ts';
import type { SimPerson } from './persons.ts';

/**
 * The Dojah dialect, as Dojah's documentation shows it (test/fixtures/providers/dojah):
 * `GET /api/v1/kyc/nin?nin=` and `GET /api/v1/kyc/phone_number?phone_number=`, headers `AppId` and
 * `Authorization: <key>` (no "Bearer"), answers `{ "entity": {...} }` with the published examples'
 * keys, errors `{ "error": "<text>" }`, 404 for a missing record (the response-codes table).
 */
const PREFIX = '/api/v1/kyc';
const LOOKUP_PATHS = new Set([`${PREFIX}/nin`, `${PREFIX}/vnin`, `${PREFIX}/phone_number`]);
const vninQuery = z.object({ vnin: z.string().regex(/^[A-Za-z0-9]{16}$/) });

/** Dojah's four vNIN refusals: its not-found (404 `{"error"}`), the first its published words. */
export const DOJAH_VNIN_REFUSALS = {
  not_found: 'vnin not found',
  expired: 'vnin expired',
  wrong_enterprise: 'vnin issued for another enterprise',
  used: 'vnin already used',
} as const;

const ninQuery = z.object({ nin: z.string().regex(/^\d{11}$/) });
const phoneQuery = z.object({ phone_number: z.string().regex(/^\+?\d{10,14}$/) });

function error(res: Response, status: number, message: string): void {
  res.status(status).json({ error: message });
}

function ymd(p: SimPerson): string {
  return [String(p.dob.year).padStart(4, '0'), String(p.dob.month).padStart(2, '0'), String(p.dob.day).padStart(2, '0')].join('-');
}

/** "Lookup NIN": the published example's keys the simulated person has values for; no NIN. */
function ninEntity(p: SimPerson): Record<string, string> {
  return {
    first_name: p.firstName,
    last_name: p.lastName,
    middle_name: p.middleName,
    gender: p.gender === 'f' ? 'Female' : 'Male',
    photo: p.photo,
    date_of_birth: ymd(p),
    email: '',
    phone_number: p.phone,
  };
}

/** "Phone Number Advance": the published example's keys, gender as a letter there. */
function phoneEntity(p: SimPerson): Record<string, string> {
  return {
    first_name: p.firstName,
    last_name: p.lastName,
    middle_name: p.middleName,
    date_of_birth: ymd(p),
    phone_number: p.phone,
    photo: p.photo,
    gender: p.gender.toUpperCase(),
    customer: randomUUID(),
  };
}

/** "Virtual NIN Lookup": the published example's keys; it echoes the token and carries no NIN. */
function vninEntity(token: string) {
  return (p: SimPerson): Record<string, string> => ({
    vnin: token,
    firstname: p.firstName,
    middlename: p.middleName,
    surname: p.lastName,
    user_id: `${p.nin.slice(0, 4)}-${p.nin.slice(7)}`,
    gender: p.gender.toUpperCase(),
    mobile: p.phone,
    dateOfBirth: ymd(p),
    photo: p.photo,
  });
}

function answers(res: Response, entity: (p: SimPerson) => Record<string, string>, what: string): Answers {
  return {
    found: (person) => void res.status(200).json({ entity: entity(person) }),
    // Worded like the one published not-found body, the vNIN page's {"error": "vnin not found"}.
    notFound: () => error(res, 404, `${what} not found`),
    refused: (status, message) => error(res, status, message),
    vninRefused: (why) => error(res, 404, DOJAH_VNIN_REFUSALS[why]),
  };
}

function routes(lookups: Lookups): Router {
  const router = Router();
  const invalid = (res: Response, e: z.ZodError) => lookups.plain(res, () => error(res, 400, invalidFields(e)));

  router.get('/nin', (req: Request, res: Response) => {
    const q = ninQuery.safeParse(req.query);
    if (!q.success) return invalid(res, q.error);
    lookups.nin(res, q.data.nin, answers(res, ninEntity, 'nin'));
  });

  router.get('/vnin', (req: Request, res: Response) => {
    const q = vninQuery.safeParse(req.query);
    if (!q.success) return invalid(res, q.error);
    lookups.vnin(res, q.data.vnin, answers(res, vninEntity(q.data.vnin), 'vnin'));
  });

  router.get('/phone_number', (req: Request, res: Response) => {
    const q = phoneQuery.safeParse(req.query);
    if (!q.success) return invalid(res, q.error);
    lookups.phone(res, q.data.phone_number, answers(res, phoneEntity, 'phone number'));
  });

  // No `error` field here: a wrong path must not read as a missing person.
  router.use((_req: Request, res: Response) => lookups.plain(res, () => void res.status(404).json({ message: 'No such endpoint' })));
  return router;
}

export const dojahDialect: SimDialect = {
  name: 'dojah',
  prefix: PREFIX,
  isLookup: (req) => req.method === 'GET' && LOOKUP_PATHS.has(lookupPath(req)),
  credential: (req) => req.get('authorization') ?? '',
  // The key as it is: Dojah's pages say "Use <key> not Bearer <key>".
  authorised: (req, c) => (!c.apiKey || req.get('authorization') === c.apiKey) && (!c.appId || req.get('appid') === c.appId),
  error,
  routes,
};
