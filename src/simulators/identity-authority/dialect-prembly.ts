import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { invalidFields } from './behaviour.ts';
import { lookupPath, type SimDialect } from './dialect.ts';
import type { Answers, Lookups } from './lookups.ts';
import { formatDmy, type SimPerson } from './persons.ts';

/**
 * The Prembly (IdentityPass) dialect, as far as Prembly publishes it
 * (test/fixtures/providers/prembly): `POST /identitypass/verification/vnin` with `number_nin` (or
 * `number`), headers `x-api-key` and `app-id`, and a `response_code` in the JSON body that says
 * found (00), not found (01, with HTTP 200) or unavailable (02). The found body's envelope and NIMC
 * record keys follow Prembly's SDK models, because the page's own response example could not be
 * read; README.md in this folder says which part rests on what.
 */
const PREFIX = '/identitypass';
const NIN_PATH = '/verification/vnin';
const PHONE_PATH = '/verification/phone_number/advance';
const LOOKUP_PATHS = new Set([`${PREFIX}${NIN_PATH}`, `${PREFIX}${PHONE_PATH}`]);

// The response-codes page's own words for code 02.
const UNAVAILABLE = "Verification can't be completed by this time, kindly retry later.";

// The page: `number_nin` or `number` (11 digits) is a NIN; a 16-character `number` is a vNIN.
const ninBody = z.union([z.object({ number_nin: z.string().regex(/^\d{11}$/) }), z.object({ number: z.string().regex(/^\d{11}$/) })]);
const vninBody = z.object({ number: z.string().regex(/^[A-Za-z0-9]{16}$/) });

/** Prembly's four vNIN refusals: its not-found (200, response_code 01) with these details. */
export const PREMBLY_VNIN_REFUSALS = {
  not_found: 'Record not found',
  expired: 'Virtual NIN has expired',
  wrong_enterprise: 'Virtual NIN was not generated for this enterprise',
  used: 'Virtual NIN has already been used',
} as const;
const phoneBody = z.object({ number: z.string().regex(/^\+?\d{10,14}$/) });

function error(res: Response, status: number, message: string): void {
  // A 503 is Prembly's code 02; every other refusal carries no response_code.
  res.status(status).json(status === 503 ? { status: false, detail: UNAVAILABLE, response_code: '02' } : { status: false, detail: message });
}

/** The NIMC keys of Prembly's NinData; absent values as empty strings, the way NIMC sends them. */
function ninData(p: SimPerson): Record<string, string> {
  return {
    birthcountry: 'nigeria',
    birthdate: formatDmy(p.dob),
    email: '',
    firstname: p.firstName,
    gender: p.gender,
    middlename: p.middleName,
    nin: p.nin,
    photo: p.photo,
    residence_address: p.address,
    residence_Town: p.town,
    residence_lga: p.lga,
    residence_state: p.state,
    self_origin_lga: p.originLga,
    self_origin_state: p.originState,
    surname: p.lastName,
    telephoneno: p.phone,
  };
}

function notFound(res: Response, detail: string): void {
  res.status(200).json({ status: false, detail, response_code: '01', verification: { status: 'NOT-VERIFIED', reference: randomUUID() } });
}

function answers(res: Response, recordKey: 'nin_data' | 'data'): Answers {
  return {
    found: (person) =>
      void res.status(200).json({
        status: true,
        detail: 'Verification Successful',
        response_code: '00',
        [recordKey]: ninData(person),
        verification: { status: 'VERIFIED', reference: randomUUID() },
      }),
    // The page: response codes come "even when HTTP status is 200"; NOT-VERIFIED means the ID is not valid.
    notFound: () => notFound(res, 'Record not found'),
    refused: (status, message) => error(res, status, message),
    vninRefused: (why) => notFound(res, PREMBLY_VNIN_REFUSALS[why]),
  };
}

function routes(lookups: Lookups): Router {
  const router = Router();
  const invalid = (res: Response, e: z.ZodError) => lookups.plain(res, () => error(res, 400, invalidFields(e)));

  router.post(NIN_PATH, (req: Request, res: Response) => {
    const vnin = vninBody.safeParse(req.body);
    if (vnin.success) return lookups.vnin(res, vnin.data.number, answers(res, 'nin_data'));
    const body = ninBody.safeParse(req.body);
    if (!body.success) return invalid(res, body.error);
    lookups.nin(res, 'number_nin' in body.data ? body.data.number_nin : body.data.number, answers(res, 'nin_data'));
  });

  router.post(PHONE_PATH, (req: Request, res: Response) => {
    const body = phoneBody.safeParse(req.body);
    if (!body.success) return invalid(res, body.error);
    lookups.phone(res, body.data.number, answers(res, 'data'));
  });

  // No `status: false` here: a wrong path must not read as a missing person.
  router.use((_req: Request, res: Response) => lookups.plain(res, () => void res.status(404).json({ detail: 'Not found.' })));
  return router;
}

export const premblyDialect: SimDialect = {
  name: 'prembly',
  prefix: PREFIX,
  isLookup: (req) => req.method === 'POST' && LOOKUP_PATHS.has(lookupPath(req)),
  credential: (req) => req.get('x-api-key') ?? '',
  authorised: (req, c) => (!c.apiKey || req.get('x-api-key') === c.apiKey) && (!c.appId || req.get('app-id') === c.appId),
  error,
  routes,
};
