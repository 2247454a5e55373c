import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser } from '../../src/modules/organisations/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { fuzzRuns, nastyString, newTally, sendAndCheck } from './fuzz-kit.ts';

// Every query parameter of every GET list in the OpenAPI document the running API serves (read at
// run time, so a list added later is fuzzed without editing this file) gets generated values:
// hostile strings, and cursors built the way the service builds them (base64url JSON naming a list)
// but with values it never issues, such as timestamps PostgreSQL cannot hold. Never a 5xx.

let stack: Stack;
let org: OrgFixture;
let platformToken: string;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { RATE_LIMIT_PER_TOKEN: '1000000', RATE_LIMIT_PER_ORG: '1000000' } });
  org = await stack.createOrg({ units: 3 });
  // Rows on every list, so a cursor that passes its checks reaches a query over real rows.
  expect((await stack.api('POST', '/v1/verify-nin', { token: org.admin.token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(200);
  expect((await stack.api('POST', '/v1/topup/initialize', { token: org.admin.token, form: { units: 100 } })).status).toBe(200);
  const admin = { username: `platform-${randomBytes(4).toString('hex')}`, password: `pw-${randomBytes(8).toString('hex')}` };
  await createUser(stack.db, { orgId: null, ...admin, role: 'platform_admin' });
  platformToken = await stack.login(admin.username, admin.password);
});
afterAll(async () => stack?.close());

type Parameter = { name: string; in: string; schema?: { enum?: string[] } };
type Operation = { parameters?: Parameter[]; responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> };

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
const timestampLike = fc.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
const cursorPart = fc.oneof(
  timestampLike,
  fc.stringMatching(/^REF-[A-Z0-9]{12}$/),
  fc.stringMatching(/^TOP-[0-9]{1,25}-[0-9a-f]{16}$/),
  fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 63, Number.MAX_SAFE_INTEGER + 2)),
  fc.constantFrom(null, true, [], {}),
  nastyString,
);
/** Cursors shaped like the service's own, naming any list, holding values it would never issue. */
const craftedCursor = fc.oneof(
  fc
    .tuple(fc.constantFrom('verifications', 'topups', 'transactions', 'x'), fc.array(cursorPart, { minLength: 0, maxLength: 3 }))
    .map(([scope, values]) => b64([scope, ...values])),
  fc.tuple(fc.constantFrom('verifications', 'topups'), timestampLike, fc.stringMatching(/^REF-[A-Z0-9]{12}$/)).map(([s, t, r]) => b64([s, t, r])),
  fc.tuple(timestampLike, fc.stringMatching(/^TOP-[0-9]{1,6}-[0-9a-f]{16}$/)).map(([t, r]) => b64(['topups', t, r])),
  fc.oneof(fc.nat(), fc.stringMatching(/^[0-9]{1,30}$/)).map((n) => Buffer.from(`org:${n}`).toString('base64url')),
);
const dayLike = fc.oneof(fc.stringMatching(/^\d{4}-\d{2}-\d{2}$/), fc.constantFrom('0000-01-01', '9999-12-31', '275760-09-13', '2026-02-29', '1970-01-01'));

function valueFor(p: Parameter): fc.Arbitrary<string> {
  const generic = fc.oneof(nastyString, fc.stringMatching(/^-?[0-9]{1,25}(\.[0-9]{1,5})?$/));
  if (p.name === 'cursor') return fc.oneof({ weight: 4, arbitrary: craftedCursor }, { weight: 1, arbitrary: generic });
  if (p.name === 'from' || p.name === 'to') return fc.oneof({ weight: 3, arbitrary: dayLike }, { weight: 1, arbitrary: generic });
  if (p.schema?.enum) return fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...p.schema.enum) }, { weight: 1, arbitrary: generic });
  return generic;
}

it('When every query parameter of every GET list in the OpenAPI document gets generated values, then never a 5xx', { timeout: 180_000 }, async () => {
  const doc = (await stack.api('GET', '/v1/openapi.json')).body as { paths: Record<string, { get?: Operation }> };
  const lists = Object.entries(doc.paths).filter(
    ([path, item]) => !path.includes('{') && item.get?.parameters?.some((p) => p.in === 'query') && item.get.responses['200'] !== undefined,
  );
  // The lists known today must be among them: a broken filter above would fuzz nothing.
  expect(lists.map(([path]) => path)).toEqual(expect.arrayContaining(['/verifications', '/topups', '/transactions', '/platform/organisations']));
  const tally = newTally();
  for (const [path, item] of lists) {
    const params = (item.get?.parameters ?? []).filter((p) => p.in === 'query');
    const token = path.startsWith('/platform') ? platformToken : org.admin.token;
    const query = fc
      .tuple(...params.map((p) => fc.option(valueFor(p), { freq: 2, nil: undefined }).map((v) => [p.name, v] as const)))
      .map((pairs) => new URLSearchParams(pairs.filter((kv): kv is readonly [string, string] => kv[1] !== undefined) as [string, string][]).toString());
    await fc.assert(
      fc.asyncProperty(query, async (qs) => {
        await sendAndCheck(stack.url, { method: 'GET', path: `/v1${path}?${qs}`, headers: { authorization: `Bearer ${token}` } }, tally);
      }),
      fuzzRuns(300),
    );
  }
  process.stdout.write(`list query fuzz statuses: ${JSON.stringify(tally.byStatus)} (${tally.requests} requests)\n`);
  expect(tally.requests).toBe(lists.length * (fuzzRuns(300).numRuns ?? 0));
  // Some requests got through every check: the fuzz reached the queries, not only the refusals.
  expect(tally.byStatus['200']).toBeGreaterThan(0);
});

it('When a cursor names a timestamp PostgreSQL cannot hold, then 400 invalid cursor on each list that keys by time', async () => {
  for (const [path, scope, ref] of [
    ['/v1/verifications', 'verifications', 'REF-AAAAAAAAAAAA'],
    ['/v1/topups', 'topups', 'TOP-1-0123456789abcdef'],
  ] as const) {
    for (const at of ['2026-13-45T25:61:61.000000Z', '0000-01-01T00:00:00.000000Z', '2026-02-30T10:00:00.000000Z']) {
      const r = await stack.api('GET', `${path}?cursor=${b64([scope, at, ref])}`, { token: org.admin.token });
      expect(r.status, `${path} ${at}`).toBe(400);
      expect(r.body).toEqual({ detail: 'invalid cursor' });
    }
  }
});
