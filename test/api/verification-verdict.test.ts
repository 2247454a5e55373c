import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

/**
 * `verdict` and `verdict_reasons` (verification/verdict.ts) on every answer of a verification, with
 * fixtures only (free, decided at once): the sync answers of each kind, the requery, the 202 of an
 * asynchronous call, the history rows, the slip and the `verification.completed` events. Faces: the
 * fixture NIN 12345678903 carries Grace Hopper's portrait (her selfie matches, Eileen Collins's does
 * not), and 12345678902 has no photo (no reference photo).
 */
const FACES = 'src/simulators/identity-authority/faces/';
const hopperSelfie = readFileSync(`${FACES}grace-hopper.selfie.jpg`).toString('base64');
const collinsSelfie = readFileSync(`${FACES}eileen-collins.selfie.jpg`).toString('base64');
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'privacy-2026-03' });
const VERIFIED = { verdict: 'verified', verdict_reasons: [] };
const not = (...reasons: string[]) => ({ verdict: 'not_verified', verdict_reasons: reasons });

let stack: Stack;
let org: OrgFixture;
beforeAll(async () => {
  stack = await startStack({ face: true });
  org = await stack.createOrg({ units: 0, subscription: false });
}, 60_000);
afterAll(async () => stack?.close());

const call = (path: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  stack.api('POST', `/v1/verify-nin${path}`, { token: org.member.token, json: { reason: 'corporate', ...body }, ...(headers ? { headers } : {}) });
const requery = (ref: string) => stack.api('POST', '/v1/verify-nin/requery', { token: org.member.token, json: { reference_id: ref } });
const verdictOf = (body: { verdict: unknown; verdict_reasons: unknown }) => ({ verdict: body.verdict, verdict_reasons: body.verdict_reasons });
const eventRow = z.object({ type: z.string(), body: z.string() });

describe('the verdict on every answer', () => {
  it('When each kind of verification is answered, then its 200, its requery and its history row carry the same verdict: found, a face that matches and all details matching verify; a mismatch, no reference photo and a differing detail do not, each saying why', { timeout: 90_000 }, async () => {
    const cases: [string, string, Record<string, unknown>, object][] = [
      ['nin', '', { nin: '12345678901' }, VERIFIED],
      ['vnin', '/vnin', { vnin: 'AA000000000001ZZ' }, VERIFIED],
      ['match, all details', '/match', { nin: '12345678901', fname: 'Adaeze', lname: 'Okonkwo' }, VERIFIED],
      ['match, another name', '/match', { nin: '12345678901', fname: 'Bola', lname: 'Okonkwo' }, not('details_no_match')],
      ['face, her own selfie', '/face', { nin: '12345678903', selfie: hopperSelfie, consent: consent() }, VERIFIED],
      ['face, another person', '/face', { nin: '12345678903', selfie: collinsSelfie, consent: consent() }, not('face_no_match')],
      ['face, match_only, another person', '/face', { nin: '12345678903', selfie: collinsSelfie, consent: consent(), match_only: true }, not('face_no_match')],
      ['face, no reference photo', '/face', { nin: '12345678902', selfie: hopperSelfie, consent: consent() }, not('no_reference_photo')],
    ];
    const refs = new Map<string, object>();
    for (const [name, path, body, expected] of cases) {
      const r = await call(path, body);
      expect(r.status, `${name}: ${r.text}`).toBe(200);
      expect(verdictOf(r.body), name).toEqual(expected);
      const ref = r.body.data.reference_id as string;
      const again = await requery(ref);
      expect(again.status, again.text).toBe(200);
      expect(verdictOf(again.body), `${name} (requery)`).toEqual(expected);
      refs.set(ref, expected);
    }
    // A NIN the authority does not know is a 404 (an error carries no verdict); its history row says not_found.
    // Other tests of this file share the organisation: the row is told apart from theirs by being new.
    const before = await stack.api('GET', '/v1/verifications?limit=100', { token: org.admin.token });
    const seen = new Set((before.body.data as { reference_id: string }[]).map((v) => v.reference_id));
    expect((await call('', { nin: '99999999999' })).status).toBe(404);
    const history = await stack.api('GET', '/v1/verifications?limit=100', { token: org.admin.token });
    expect(history.status, history.text).toBe(200);
    const rows = history.body.data as { reference_id: string; status: string; verdict: unknown; verdict_reasons: unknown }[];
    for (const [ref, expected] of refs) expect(verdictOf(rows.find((v) => v.reference_id === ref)!), ref).toEqual(expected);
    expect(rows.filter((v) => !seen.has(v.reference_id)).map((v) => [v.status, verdictOf(v)])).toEqual([['not_found', not('not_found')]]);
  });

  it('When a verification is asked asynchronously, then its 202 has no verdict yet (null, no reasons), and verification.completed carries the verdict it ended with', async () => {
    const hook = await stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url: 'http://127.0.0.1:9/verdict-hook', events: ['verification.completed'] } });
    expect(hook.status, hook.text).toBe(201);
    const async = { Prefer: 'respond-async' };
    const sent = [
      await call('', { nin: '12345678901' }, async),
      await call('/face', { nin: '12345678903', selfie: collinsSelfie, consent: consent() }, async),
      await call('', { nin: '99999999999' }, async),
      await call('/vnin', { vnin: 'AA000000000008ZZ' }, async),
    ];
    for (const r of sent) {
      expect(r.status, r.text).toBe(202);
      expect(r.body).toMatchObject({ status: 'pending', verdict: null, verdict_reasons: [] });
    }
    const events = await stack.db.any(sql.type(eventRow)`SELECT type, body FROM webhook_events WHERE org_id = ${org.orgId} ORDER BY created_at`);
    const byRef = new Map(events.map((e) => [JSON.parse(e.body).data.reference_id as string, JSON.parse(e.body).data]));
    expect(sent.map((r) => byRef.get(r.body.reference_id))).toEqual([
      { reference_id: sent[0]!.body.reference_id, kind: 'nin', status: 'found', ...VERIFIED },
      { reference_id: sent[1]!.body.reference_id, kind: 'face', status: 'found', ...not('face_no_match') },
      { reference_id: sent[2]!.body.reference_id, kind: 'nin', status: 'not_found', ...not('not_found') },
      { reference_id: sent[3]!.body.reference_id, kind: 'vnin', status: 'refused', code: 'vnin_expired', ...not('refused') },
    ]);
  });

  const hasPdftotext = existsSync('/usr/bin/pdftotext');
  it.skipIf(!hasPdftotext)('When a found verification\'s slip is printed, then it says its verdict', async () => {
    const r = await call('', { nin: '12345678901' });
    const slip = await fetch(`${stack.url}/v1/verify-nin/slip/${r.body.data.reference_id}`, { headers: { authorization: `Bearer ${org.member.token}` } });
    expect(slip.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'verdict-slip-'));
    try {
      writeFileSync(join(dir, 'slip.pdf'), Buffer.from(await slip.arrayBuffer()));
      const text = (await promisify(execFile)('pdftotext', ['-layout', join(dir, 'slip.pdf'), '-'])).stdout;
      expect(text).toMatch(/Verdict\s+verified/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
