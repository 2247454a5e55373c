import { readFileSync } from 'node:fs';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runCommand } from '../../src/cli/admin.ts';
import MESSAGES from '../../src/modules/links/page/messages.en.json' with { type: 'json' };
import { LIVENESS_REQUIRED } from '../../src/modules/verification/liveness-required.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { HOPPER_NIN, makeLink, openPage, ownAddress, sandboxVnin, submitPage } from '../setup/links.ts';

/**
 * An organisation's `require_liveness` (PATCH /me/organisation, the CLI's org:settings): a face
 * match with a plain selfie, by the API or on a verification link's page, is refused 422
 * `liveness_required` among the request's own checks: nothing looked up, recorded, held or charged.
 * The refusal comes before any face job, so no face worker runs here.
 */
const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ workers: false, env: { TRUST_PROXY: 'loopback' } });
  // The first verification may fetch the authority's reasons list; a fixture call does it now, so
  // the refusal tests count lookups only.
  const warm = await stack.createOrg();
  await stack.api('POST', '/v1/verify-nin', { token: warm.member.token, json: { nin: '12345678901', reason: 'corporate' } });
}, 60_000);
afterAll(async () => stack?.close());

const count = (what: 'verifications' | 'wallet_transactions', orgId: number) =>
  stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM ${sql.identifier([what])} WHERE org_id = ${orgId} AND ${what === 'wallet_transactions' ? sql.fragment`kind <> 'adjustment'` : sql.fragment`true`}`);
const wallet = (orgId: number) => stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${orgId}`);

// The admin CLI's command as its entry point runs it, in this process (test/api/cli-flags.test.ts
// proves the entry point reads every documented flag).
const orgSettings = (orgId: number, value: string) => runCommand(stack.db, stack.config, 'org:settings', { org: String(orgId), 'require-liveness': value });

describe('require_liveness', () => {
  it('When an administrator sets require_liveness, then it is saved, returned with the settings (default false) and named in the audit trail; a member may not set it; a wrong type is 422', async () => {
    const org = await stack.createOrg();
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.member.token })).body.require_liveness).toBe(false);
    const on = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_liveness: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.body.require_liveness).toBe(true);
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.member.token })).body.require_liveness).toBe(true);
    const details = await stack.db.oneFirst(sql.type(z.object({ details: z.any() }))`
      SELECT details FROM audit_events WHERE org_id = ${org.orgId} AND action = 'organisation.settings_changed' ORDER BY id DESC LIMIT 1`);
    expect(details).toEqual({ changed: ['require_liveness'], require_liveness: true });
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.member.token, json: { require_liveness: false } })).status).toBe(403);
    const wrong = await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_liveness: 'yes' } });
    expect(wrong.status).toBe(422);
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.require_liveness).toBe(true);
  });

  it('When an operator sets it with org:settings --require-liveness, then it is saved and recorded by the operator; a value other than true or false is refused', async () => {
    const org = await stack.createOrg();
    expect(await orgSettings(org.orgId, 'true')).toMatchObject({ require_liveness: true });
    expect((await stack.api('GET', '/v1/me/organisation', { token: org.admin.token })).body.require_liveness).toBe(true);
    const trail = await stack.db.one(sql.type(z.object({ actor: z.string(), details: z.any() }))`
      SELECT actor, details FROM audit_events WHERE action = 'organisation.settings_changed' AND target = ${`org:${org.orgId}`} ORDER BY id DESC LIMIT 1`);
    expect(trail).toMatchObject({ actor: 'operator', details: { changed: ['require_liveness'], require_liveness: true } });
    await expect(orgSettings(org.orgId, 'yes')).rejects.toThrow('--require-liveness must be true or false');
    expect(await orgSettings(org.orgId, 'false')).toMatchObject({ require_liveness: false });
  });

  it('When the organisation requires liveness, then a face match with a selfie (live or fixture, sync or async) is refused 422 liveness_required, with nothing looked up, recorded, held or charged', async () => {
    const org = await stack.createOrg({ units: 10 });
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_liveness: true } })).status).toBe(200);
    const calls = stack.identitySim.stats().calls;
    for (const [body, headers] of [
      [{ nin: HOPPER_NIN }, {}],
      [{ nin: '12345678901' }, {}],
      [{ nin: HOPPER_NIN }, { Prefer: 'respond-async', 'Idempotency-Key': 'liveness-required-1' }],
    ] as const) {
      const r = await stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { reason: 'corporate', consent: consent(), selfie, ...body }, headers });
      expect([r.status, r.body.code, r.body.detail], r.text).toEqual([422, 'liveness_required', LIVENESS_REQUIRED]);
    }
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await count('verifications', org.orgId)).toBe(0);
    expect(await count('wallet_transactions', org.orgId)).toBe(0);
    expect(await wallet(org.orgId)).toEqual({ units: 10, reserved: 0 });
    // The Idempotency-Key was not claimed: the same key is free once the setting is off.
    const claimed = await stack.db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM idempotency_keys WHERE org_id = ${org.orgId}`);
    expect(claimed).toBe(0);
    // Other modes are not face matches: a NIN lookup goes on.
    expect((await stack.api('POST', '/v1/verify-nin', { token: org.member.token, json: { nin: '12345678901', reason: 'corporate' } })).status).toBe(200);
  });

  it('When the organisation requires liveness, then a link page submitting a selfie is told the organisation asks for a live camera check this link cannot make (422 liveness_required), nothing charged, and the use comes back', async () => {
    const org = await stack.createOrg({ units: 10 });
    const link = await makeLink(stack, org.admin.token);
    expect((await stack.api('PATCH', '/v1/me/organisation', { token: org.admin.token, json: { require_liveness: true } })).status).toBe(200);
    const { csrf } = await openPage(stack, link.url);
    const vnin = await sandboxVnin(stack, HOPPER_NIN);
    const calls = stack.identitySim.stats().calls;
    const sent = await submitPage(stack, link.url, { csrf, vnin, selfie: `data:image/jpeg;base64,${selfie}` }, { from: ownAddress() });
    expect(sent.status, sent.text).toBe(422);
    expect([sent.body.code, sent.body.step]).toEqual(['liveness_required', 'result']);
    expect(sent.body.detail).toBe(MESSAGES.errors.liveness_required.replace('{org}', sent.body.detail.split(' asks for')[0]!));
    expect(sent.body.detail).toMatch(/ asks for a live camera check that this link cannot make\. Nothing was sent or charged\./);
    expect(stack.identitySim.stats().calls).toBe(calls);
    expect(await count('verifications', org.orgId)).toBe(0);
    expect(await wallet(org.orgId)).toEqual({ units: 10, reserved: 0 });
    const after = await stack.api('GET', `/v1/verification-links/${link.id}`, { token: org.admin.token });
    expect([after.body.uses, after.body.submissions]).toEqual([0, []]);
  });
});
