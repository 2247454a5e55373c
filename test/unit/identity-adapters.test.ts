import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentityAuthority } from '../../src/adapters/identity-authority/index.ts';
import type { IdentityAuthority } from '../../src/adapters/identity-authority/types.ts';
import { foundRecord as found, upstreamError } from '../setup/upstream.ts';

// An 8x8 JPEG standing in for the photos in the vendors' samples (theirs are truncated "/9j/4AAQ...").
const PHOTO =
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcgLikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//' +
  '2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT0//wAARCAAIAAgDASIAAhEBAxEB/8QA' +
  'FQABAQAAAAAAAAAAAAAAAAAAAAX/xAAeEAABAgcBAAAAAAAAAAAAAAAAAhIDBAUTFCFRMf/EABQBAQAAAAAAAAAAAAAAAAAAAAT/xAAVEQEBAAAAAAAAAAAA' +
  'AAAAAAABAP/aAAwDAQACEQMRAD8Aj1GcjZilvVa47XnAAHCSt//Z';

async function listen(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

const DEMOGRAPHY = { firstName: 'John', lastName: 'Doe', dob: '06-05-1993', gender: 'm' as const, reason: 'nyscCheck' };

describe('prembly adapter', () => {
  // A fake: envelope and record keys as in Prembly's SDK models (LookUpVirtualNINResponse, NinData)
  // and response-code table, values invented. The published examples are in provider-examples.test.ts.
  const premblyNinRecord = {
    birthcountry: 'nigeria',
    birthdate: '06-05-1993',
    birthlga: 'Ikeja',
    birthstate: 'Lagos',
    centralID: '123456',
    email: '',
    firstname: 'JOHN',
    gender: 'm',
    middlename: 'CHINWE',
    nin: '70123456789',
    photo: PHOTO,
    residence_address: '5 Adeniyi Jones Avenue',
    residence_Town: 'Ikeja',
    residence_lga: 'Ikeja',
    residence_state: 'Lagos',
    self_origin_lga: 'Onitsha North',
    self_origin_state: 'Anambra',
    surname: 'DOE',
    telephoneno: '08012345678',
    title: 'mr',
  };

  let server: { url: string; close(): Promise<void> };
  let authority: IdentityAuthority;
  const seen: { apiKey?: string | undefined; appId?: string | undefined; body?: unknown } = {};

  beforeAll(async () => {
    const app = express();
    app.use(express.json());
    app.post('/identitypass/verification/vnin', (req: Request, res: Response) => {
      seen.apiKey = req.get('x-api-key');
      seen.appId = req.get('app-id');
      seen.body = req.body;
      if (req.get('x-api-key') !== 'live_sk_test') {
        res.status(401).json({ detail: 'Authentication credentials were not provided.', status: false });
        return;
      }
      const nin = (req.body as { number_nin?: string }).number_nin;
      switch (nin) {
        case '70123456789':
          res.json({
            status: true,
            detail: 'Verification Successfull',
            response_code: '00',
            nin_data: premblyNinRecord,
            verification: { status: 'VERIFIED', reference: 'c8e2f0a1-5b7d-4e0b-9f4e-2a1d0c3b4e5f' },
          });
          return;
        case '70123456790':
          // Newer answers put the record under `data`.
          res.json({ status: true, detail: 'Verification Successful', response_code: '00', data: { ...premblyNinRecord, nin: '70123456790' } });
          return;
        case '11111111101':
          res.json({ status: false, detail: 'Record not found', response_code: '01' });
          return;
        case '11111111102':
          res.status(404).json({ status: false, detail: 'Record not found', response_code: '01' });
          return;
        case '11111111103':
          res.json({ status: false, detail: "Verification can't be completed by this time, kindly retry later.", response_code: '02' });
          return;
        case '11111111104':
          res.status(402).json({ status: false, detail: 'Insufficient wallet balance', response_code: '03' });
          return;
        case '11111111105':
          res.status(500).type('html').send('<h1>Server Error (500)</h1>');
          return;
        case '11111111106':
          res.status(429).set('Retry-After', '30').json({ detail: 'Request was throttled.' });
          return;
        default:
          res.status(400).json({ status: false, detail: 'number_nin is invalid' });
      }
    });
    app.post('/identitypass/verification/phone_number/advance', (req: Request, res: Response) => {
      const phone = (req.body as { number?: string }).number;
      if (phone !== '08012345678') {
        res.json({ status: false, detail: 'Record not found', response_code: '01' });
        return;
      }
      res.json({
        status: true,
        detail: 'Verification Successful',
        response_code: '00',
        data: { firstName: 'JOHN', lastName: 'DOE', middleName: 'CHINWE', dateOfBirth: '1993-05-06', gender: 'Male', phone: '08012345678', nin: '70123456789', photo: PHOTO },
        verification: { status: 'VERIFIED', reference: 'ref-phone-1' },
      });
    });
    server = await listen(app);
    authority = createIdentityAuthority({ dialect: 'prembly', baseUrl: `${server.url}/`, apiKey: 'live_sk_test', appId: 'app-123', timeoutMs: 2_000 });
  });

  afterAll(async () => {
    await server.close();
  });

  it('When the NIN is found, then the nin_data record maps to every person field', async () => {
    const record = found(await authority.lookupNin({ nin: '70123456789', reason: 'corporate' }));
    expect(seen).toMatchObject({ apiKey: 'live_sk_test', appId: 'app-123', body: { number_nin: '70123456789' } });
    expect(record).toEqual({
      nin: '70123456789',
      fname: 'JOHN',
      mname: 'CHINWE',
      lname: 'DOE',
      dob: '06-05-1993',
      gender: 'M',
      phone: '08012345678',
      residenceAdress: '5 Adeniyi Jones Avenue',
      residenceTown: 'Ikeja',
      residenceLga: 'Ikeja',
      residenceState: 'Lagos',
      stateOfOrigin: 'Anambra',
      lgaOfOrigin: 'Onitsha North',
      image: PHOTO,
      transaction_id: 'c8e2f0a1-5b7d-4e0b-9f4e-2a1d0c3b4e5f',
    });
  });

  it('When the base URL already ends in /identitypass, then the path is not doubled', async () => {
    const rooted = createIdentityAuthority({ dialect: 'prembly', baseUrl: `${server.url}/identitypass/`, apiKey: 'live_sk_test', timeoutMs: 2_000 });
    expect(found(await rooted.lookupNin({ nin: '70123456789', reason: 'corporate' })).nin).toBe('70123456789');
  });

  it('When the record comes under data instead of nin_data, then it is read too', async () => {
    expect(found(await authority.lookupNin({ nin: '70123456790', reason: 'corporate' })).nin).toBe('70123456790');
  });

  it('When Prembly answers response_code 01, with HTTP 200 or 404, then it is not found', async () => {
    expect(await authority.lookupNin({ nin: '11111111101', reason: 'corporate' })).toEqual({ kind: 'not_found' });
    expect(await authority.lookupNin({ nin: '11111111102', reason: 'corporate' })).toEqual({ kind: 'not_found' });
  });

  it('When Prembly answers 5xx, 429 or response_code 02, then the error is retryable', async () => {
    expect(await upstreamError(authority.lookupNin({ nin: '11111111105', reason: 'corporate' }))).toMatchObject({ retryable: true, status: 500 });
    expect(await upstreamError(authority.lookupNin({ nin: '11111111106', reason: 'corporate' }))).toMatchObject({
      retryable: true,
      status: 429,
      retryAfterMs: 30_000,
    });
    expect(await upstreamError(authority.lookupNin({ nin: '11111111103', reason: 'corporate' }))).toMatchObject({ retryable: true });
  });

  it('When Prembly answers another 4xx or response_code 03, then the error is not retryable and names no NIN', async () => {
    const bad = await upstreamError(authority.lookupNin({ nin: '22222222222', reason: 'corporate' }));
    expect(bad).toMatchObject({ retryable: false, status: 400 });
    expect(bad.message).not.toContain('22222222222');
    expect(await upstreamError(authority.lookupNin({ nin: '11111111104', reason: 'corporate' }))).toMatchObject({ retryable: false, status: 402 });
    const wrongKey = createIdentityAuthority({ dialect: 'prembly', baseUrl: server.url, apiKey: 'nope', timeoutMs: 2_000 });
    expect(await upstreamError(wrongKey.lookupNin({ nin: '70123456789', reason: 'corporate' }))).toMatchObject({ retryable: false, status: 401 });
  });

  it('When a phone is looked up, then the data record maps, and an unknown phone is not found', async () => {
    const record = found(await authority.lookupPhone({ phone: '08012345678', reason: 'corporate' }));
    expect(record).toMatchObject({ nin: '70123456789', fname: 'JOHN', lname: 'DOE', dob: '06-05-1993', gender: 'M', phone: '08012345678', transaction_id: 'ref-phone-1' });
    expect(await authority.lookupPhone({ phone: '08099999999', reason: 'corporate' })).toEqual({ kind: 'not_found' });
  });

  it('When demography is asked, then a non-retryable not-supported error comes back; reasons are the defaults', async () => {
    const err = await upstreamError(authority.lookupDemography(DEMOGRAPHY));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/not supported/);
    expect((await authority.listReasons()).map((r) => r.key)).toEqual(['corporate', 'nyscCheck', 'telecommunicationSimReg']);
  });
});

describe('dojah adapter', () => {
  let server: { url: string; close(): Promise<void> };
  let authority: IdentityAuthority;
  const seen: { appId?: string | undefined; authorization?: string | undefined; query?: unknown } = {};

  beforeAll(async () => {
    const app = express();
    app.use((req: Request, res: Response, next) => {
      seen.appId = req.get('appid');
      seen.authorization = req.get('authorization');
      seen.query = { ...req.query };
      if (req.get('authorization') !== 'test_sk_dojah' || req.get('appid') !== 'dojah-app') {
        res.status(401).json({ error: 'Unauthorized' });
        return;
      }
      next();
    });
    app.get('/api/v1/kyc/nin', (req: Request, res: Response) => {
      switch (req.query.nin) {
        case '70123456789':
          // The "Lookup NIN" sample response of Dojah's docs, photo made decodable.
          res.json({
            entity: {
              first_name: 'John',
              last_name: 'Doe',
              gender: 'Male',
              middle_name: '',
              photo: PHOTO,
              date_of_birth: '1982-01-01',
              email: 'abc@gmail.com',
              phone_number: '08012345678',
              employment_status: 'unemployment',
              marital_status: 'Single',
            },
          });
          return;
        case '11111111101':
          res.status(404).json({ error: 'NIN not found' });
          return;
        case '11111111102':
          res.status(400).json({ error: 'Your request could not be processed, nin not found' });
          return;
        case '11111111103':
          res.status(503).json({ error: 'Service unavailable' });
          return;
        case '11111111104':
          res.status(429).set('Retry-After', '2').json({ error: 'Too many requests' });
          return;
        case '11111111105':
          res.status(200).send('');
          return;
        default:
          res.status(400).json({ error: 'Invalid nin' });
      }
    });
    app.get('/api/v1/kyc/phone_number', (req: Request, res: Response) => {
      if (req.query.phone_number !== '08012345678') {
        res.status(404).json({ error: 'Phone number not found' });
        return;
      }
      // The "Phone Number Advance" sample response of Dojah's docs.
      res.json({
        entity: {
          first_name: 'JOHN',
          last_name: 'DOE',
          middle_name: 'CHHUKWU',
          date_of_birth: '1960-12-12',
          phone_number: '08012345678',
          photo: PHOTO,
          gender: 'M',
          customer: '9b2ac137-5360-4050-b412-4fa6728a31fb',
        },
      });
    });
    server = await listen(app);
    authority = createIdentityAuthority({ dialect: 'dojah', baseUrl: server.url, apiKey: 'test_sk_dojah', appId: 'dojah-app', timeoutMs: 2_000 });
  });

  afterAll(async () => {
    await server.close();
  });

  it('When the NIN is found, then the entity maps and the key goes without Bearer', async () => {
    const record = found(await authority.lookupNin({ nin: '70123456789', reason: 'corporate' }));
    expect(seen).toMatchObject({ appId: 'dojah-app', authorization: 'test_sk_dojah', query: { nin: '70123456789' } });
    expect(record).toMatchObject({
      fname: 'John',
      mname: '',
      lname: 'Doe',
      dob: '01-01-1982',
      gender: 'M',
      phone: '08012345678',
      image: PHOTO,
      // Not in Dojah's answer: the adapter fills in the NIN that was asked for.
      nin: '70123456789',
      transaction_id: '',
    });
  });

  it('When Dojah answers 404, or 400 saying not found, then it is not found', async () => {
    expect(await authority.lookupNin({ nin: '11111111101', reason: 'corporate' })).toEqual({ kind: 'not_found' });
    expect(await authority.lookupNin({ nin: '11111111102', reason: 'corporate' })).toEqual({ kind: 'not_found' });
  });

  it('When Dojah answers 5xx or 429, then the error is retryable', async () => {
    expect(await upstreamError(authority.lookupNin({ nin: '11111111103', reason: 'corporate' }))).toMatchObject({ retryable: true, status: 503 });
    expect(await upstreamError(authority.lookupNin({ nin: '11111111104', reason: 'corporate' }))).toMatchObject({
      retryable: true,
      status: 429,
      retryAfterMs: 2_000,
    });
  });

  it('When Dojah answers another 4xx or an unexpected 200 body, then the error is not retryable', async () => {
    expect(await upstreamError(authority.lookupNin({ nin: '33333333333', reason: 'corporate' }))).toMatchObject({ retryable: false, status: 400 });
    expect(await upstreamError(authority.lookupNin({ nin: '11111111105', reason: 'corporate' }))).toMatchObject({ retryable: false, status: 200 });
    const wrongKey = createIdentityAuthority({ dialect: 'dojah', baseUrl: server.url, apiKey: 'nope', appId: 'dojah-app', timeoutMs: 2_000 });
    expect(await upstreamError(wrongKey.lookupNin({ nin: '70123456789', reason: 'corporate' }))).toMatchObject({ retryable: false, status: 401 });
  });

  it('When a phone is looked up, then the entity maps, and an unknown phone is not found', async () => {
    const record = found(await authority.lookupPhone({ phone: '08012345678', reason: 'corporate' }));
    expect(seen.query).toEqual({ phone_number: '08012345678' });
    expect(record).toMatchObject({ fname: 'JOHN', mname: 'CHHUKWU', lname: 'DOE', dob: '12-12-1960', gender: 'M', phone: '08012345678' });
    expect(await authority.lookupPhone({ phone: '08099999999', reason: 'corporate' })).toEqual({ kind: 'not_found' });
  });

  it('When demography is asked, then a non-retryable not-supported error comes back', async () => {
    const err = await upstreamError(authority.lookupDemography(DEMOGRAPHY));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/not supported/);
  });

  it('When the dojah dialect has no appId, then creating it fails', () => {
    expect(() => createIdentityAuthority({ dialect: 'dojah', baseUrl: server.url, apiKey: 'k', timeoutMs: 1_000 })).toThrow(/appId/);
  });
});

describe('network faults, any dialect', () => {
  it('When nothing listens at the base URL, then the error is retryable', async () => {
    const closed = await listen(express());
    await closed.close();
    const authority = createIdentityAuthority({ dialect: 'dojah', baseUrl: closed.url, apiKey: 'k', appId: 'a', timeoutMs: 2_000 });
    expect(await upstreamError(authority.lookupNin({ nin: '70123456789', reason: 'corporate' }))).toMatchObject({ retryable: true, status: undefined });
  });

  it('When the caller aborts, then the error is retryable and comes at once', async () => {
    const app = express();
    app.post('/identitypass/verification/vnin', () => {
      // never answers
    });
    const hanging = await listen(app);
    try {
      const authority = createIdentityAuthority({ dialect: 'prembly', baseUrl: hanging.url, apiKey: 'k', timeoutMs: 10_000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const started = Date.now();
      const err = await upstreamError(authority.lookupNin({ nin: '70123456789', reason: 'corporate' }, controller.signal));
      expect(err.retryable).toBe(true);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await hanging.close();
    }
  });
});
