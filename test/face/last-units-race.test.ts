import { readFileSync } from 'node:fs';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startStack, type Stack } from '../setup/harness.ts';

/**
 * Face matches racing for a wallet that pays for one of them only. Whatever order the
 * requests take, an answer is never a 402 over a charged lookup: every reference with a ledger line
 * answered 200 with its face result, every 402 charged nothing, and the wallet never went below zero.
 */
const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
const ledgerRow = z.object({ reference: z.string(), units: z.coerce.number() });

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ face: true });
}, 60_000);
afterAll(async () => stack?.close());

describe('face matches racing for the last units', () => {
  it('When two face matches arrive at once on a wallet of exactly FACE_MATCH_UNITS (2), then no answer is a 402 over a charged lookup, and the units spent are what the answers say', async () => {
    const org = await stack.createOrg({ units: 2 });
    const body = { nin: '70000000001', reason: 'corporate', selfie, consent: { obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' } };
    const answers = await Promise.all([0, 1].map(() => stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: body })));
    const charged = await stack.db.any(sql.type(ledgerRow)`
      SELECT reference, -sum(units_delta)::int AS units FROM wallet_transactions WHERE org_id = ${org.orgId} AND kind IN ('verification', 'face_match') GROUP BY reference`);
    const byRef = new Map(charged.map((c) => [c.reference, c.units]));
    for (const a of answers) {
      expect([200, 402], a.text).toContain(a.status);
      if (a.status === 402) {
        // Refused before anything was held: no reference was charged for it.
        expect(a.body.reference_id === undefined || !byRef.has(a.body.reference_id), a.text).toBe(true);
      } else {
        expect(a.body.face.status).toBe('compared');
        expect(byRef.get(a.body.data.reference_id)).toBeGreaterThanOrEqual(1);
      }
    }
    // Every charged reference was answered 200; at most the wallet's two units went.
    const ok = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.data.reference_id as string));
    expect([...byRef.keys()].filter((r) => !ok.has(r))).toEqual([]);
    const spent = [...byRef.values()].reduce((n, u) => n + u, 0);
    expect(spent).toBeLessThanOrEqual(2);
    expect(await stack.db.one(sql.type(z.object({ units: z.coerce.number(), reserved: z.coerce.number() }))`SELECT units, reserved FROM wallets WHERE org_id = ${org.orgId}`)).toEqual({ units: 2 - spent, reserved: 0 });
  });
});
