import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../../src/lib/logger.ts';
import * as repo from '../../src/modules/links/links.repository.ts';
import { settleSubmission, submissionGraceMs, sweepSubmissions } from '../../src/modules/links/submissions.ts';
import { newReferenceId } from '../../src/modules/verification/index.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { HOPPER_NIN, linkReceiver, makeLink, openPage, ownAddress, sandboxVnin, submitPage, type MadeLink } from '../setup/links.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * A verification link's submission survives a crash. Its use is taken with its row, pending,
 * under the reference its verification then runs under; the page settles it after the verification,
 * and the links sweep settles what a stopped process left pending, from the verification. No worker
 * runs here unless a test starts one, so a live lookup's job waits in its queue until then; the sweep
 * is driven directly, with a clock past the grace period.
 */
const FIXTURE_VNIN = 'AA000000000001ZZ';
const FIXTURE_VNIN_NOT_FOUND = 'AA000000000009ZZ';

let stack: Stack;
const log = createLogger({ level: 'error' });
const q = sql.type(z.record(z.string(), z.any()));

beforeAll(async () => {
  // The page waits for its lookup long enough for a test to start the workers (the test orders by events, not by this wait).
  stack = await startStack({ workers: false, env: { TRUST_PROXY: 'loopback', VERIFY_WAIT_MS: '60000' } });
}, 90_000);
afterAll(async () => stack?.close());

const sweepAt = (at: Date) => sweepSubmissions({ db: stack.db, config: stack.config, clock: { now: () => at } }, log);
const pastGrace = () => new Date(Date.now() + submissionGraceMs(stack.config) + 60_000);
const submissionsOf = (linkId: string) => stack.db.any(q`SELECT reference_id, status, code FROM verification_link_submissions WHERE link_id = ${linkId} ORDER BY id`);
const submissionOf = (ref: string) => stack.db.maybeOne(q`SELECT status, code FROM verification_link_submissions WHERE reference_id = ${ref}`);
const usesOf = (linkId: string) => stack.db.oneFirst(sql.type(z.object({ uses: z.coerce.number() }))`SELECT uses FROM verification_links WHERE id = ${linkId}`);
const verificationOf = (ref: string) => stack.db.maybeOne(q`SELECT status, failure_code FROM verifications WHERE reference_id = ${ref}`);
const eventsFor = (ref: string) =>
  stack.db.any(q`SELECT body::jsonb -> 'data' AS data FROM webhook_events WHERE type = 'verification_link.submitted' AND body::jsonb #>> '{data,reference_id}' = ${ref}`);
const deliveryOf = (ref: string) =>
  stack.db.maybeOneFirst(sql.type(z.object({ status: z.string() }))`
    SELECT d.status FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.body::jsonb #>> '{data,reference_id}' = ${ref}`);
const detail = async (org: OrgFixture, id: string) => {
  const r = await stack.api('GET', `/v1/verification-links/${id}`, { token: org.admin.token });
  expect(r.status, r.text).toBe(200);
  return r.body;
};

/** A verification recorded for the organisation by its own API call (a fixture vNIN: decided at once); its reference. */
async function recordedVerification(org: OrgFixture, vnin: string, status: number): Promise<string> {
  const before = new Set((await stack.db.anyFirst(sql.type(z.object({ r: z.string() }))`SELECT reference_id AS r FROM verifications WHERE org_id = ${org.orgId}`)) as string[]);
  const r = await stack.api('POST', '/v1/verify-nin/vnin', { token: org.member.token, json: { vnin, reason: 'corporate' } });
  expect(r.status, r.text).toBe(status);
  const refs = (await stack.db.anyFirst(sql.type(z.object({ r: z.string() }))`SELECT reference_id AS r FROM verifications WHERE org_id = ${org.orgId}`)) as string[];
  const made = refs.filter((ref) => !before.has(ref));
  expect(made).toHaveLength(1);
  return made[0]!;
}

/** What a process that stopped right after the page's first statement leaves: the use taken, the row pending under `ref`. */
async function leftPending(link: MadeLink, ref: string): Promise<void> {
  expect(await repo.takeUse(stack.db, { linkId: link.id, referenceId: ref, at: new Date() })).toBe(true);
  expect(await submissionOf(ref)).toEqual({ status: 'pending', code: null });
}

describe('a link submission survives a crash', () => {
  it("When a submission's verification is running, then its row is already recorded pending under the verification's reference, holding the use; the sweep leaves it; once the lookup ends, the page settles it found with one event", async () => {
    const org = await stack.createOrg({ units: 5 });
    await linkReceiver(stack, org);
    const link = await makeLink(stack, org.admin.token, { require_face: false, client_ref: 'applicant-durable' });
    const csrf = (await openPage(stack, link.url)).csrf;
    const vnin = await sandboxVnin(stack, HOPPER_NIN);
    const sent = submitPage(stack, link.url, { csrf, vnin }, { from: ownAddress() });
    try {
      // No worker: the lookup job waits in its queue, and the page waits for it.
      const row = await waitFor(async () => (await submissionsOf(link.id))[0], { what: 'the submission row' });
      const ref = row.reference_id as string;
      expect(row).toEqual({ reference_id: ref, status: 'pending', code: null });
      expect(await waitFor(() => verificationOf(ref), { what: 'the pending verification' })).toEqual({ status: 'pending', failure_code: null });
      expect(await usesOf(link.id)).toBe(1);
      expect((await detail(org, link.id)).submissions).toEqual([{ reference_id: ref, status: 'pending', code: null, face: null, verdict: null, verdict_reasons: [], submitted_at: expect.any(String) }]);
      expect(await eventsFor(ref)).toEqual([]);

      // Past the grace period the sweep looks, and leaves it: its verification has not ended.
      expect(await sweepAt(pastGrace())).toEqual({ settled: 0, abandoned: 0 });
      expect(await submissionOf(ref)).toEqual({ status: 'pending', code: null });

      const workers = await stack.startWorkers();
      try {
        const answer = await sent;
        expect(answer.status, answer.text).toBe(200);
        // Delivered by the workers' dispatcher before they stop (and the organisation learns of it).
        await waitFor(async () => (await deliveryOf(ref)) === 'delivered', { what: `the event of ${ref} delivered` });
      } finally {
        await workers.close();
      }
      expect(await submissionOf(ref)).toEqual({ status: 'found', code: null });
      expect(await verificationOf(ref)).toEqual({ status: 'found', failure_code: null });
      expect(await usesOf(link.id)).toBe(1);
      expect((await eventsFor(ref)).map((e) => e.data)).toEqual([{ link_id: link.id, client_ref: 'applicant-durable', reference_id: ref, status: 'found', face: null, verdict: 'verified', verdict_reasons: [] }]);
    } finally {
      // Whatever failed above, the page's request ends before the next test.
      await sent.catch(() => undefined);
    }
  });

  it('When a process stopped after a verification ended but before its submission was settled, then past the grace period (not before) the sweep settles it as the page would: found keeps its use, refused gives it back, one event each; a second sweep changes nothing', async () => {
    const org = await stack.createOrg({ units: 5 });
    await linkReceiver(stack, org);
    const link = await makeLink(stack, org.admin.token, { require_face: false, max_uses: 2 });
    const found = await recordedVerification(org, FIXTURE_VNIN, 200);
    const refused = await recordedVerification(org, FIXTURE_VNIN_NOT_FOUND, 404);
    await leftPending(link, found);
    await leftPending(link, refused);
    expect(await usesOf(link.id)).toBe(2);

    // Within the grace period its request may still be running: the sweep does not look.
    expect(await sweepAt(new Date())).toEqual({ settled: 0, abandoned: 0 });
    expect(await submissionOf(found)).toEqual({ status: 'pending', code: null });

    expect(await sweepAt(pastGrace())).toEqual({ settled: 2, abandoned: 0 });
    expect(await submissionOf(found)).toEqual({ status: 'found', code: null });
    expect(await submissionOf(refused)).toEqual({ status: 'refused', code: 'vnin_not_found' });
    expect(await usesOf(link.id)).toBe(1);
    expect((await eventsFor(found)).map((e) => e.data)).toEqual([{ link_id: link.id, client_ref: null, reference_id: found, status: 'found', face: null, verdict: 'verified', verdict_reasons: [] }]);
    expect((await eventsFor(refused)).map((e) => e.data)).toEqual([{ link_id: link.id, client_ref: null, reference_id: refused, status: 'refused', face: null, verdict: 'not_verified', verdict_reasons: ['not_found'] }]);

    expect(await sweepAt(pastGrace())).toEqual({ settled: 0, abandoned: 0 });
    expect(await usesOf(link.id)).toBe(1);
    expect(await eventsFor(found)).toHaveLength(1);
    expect(await eventsFor(refused)).toHaveLength(1);
  });

  it('When a process stopped before any verification was recorded, then past the grace period the sweep marks the submission abandoned and gives its use back, with no event; the link takes submissions again', async () => {
    const org = await stack.createOrg({ units: 5 });
    await linkReceiver(stack, org);
    const link = await makeLink(stack, org.admin.token, { require_face: false });
    const ref = newReferenceId();
    await leftPending(link, ref);
    expect((await detail(org, link.id)).status).toBe('used_up');

    expect(await sweepAt(new Date())).toEqual({ settled: 0, abandoned: 0 });
    expect(await submissionOf(ref)).toEqual({ status: 'pending', code: null });

    expect(await sweepAt(pastGrace())).toEqual({ settled: 0, abandoned: 1 });
    expect(await submissionOf(ref)).toEqual({ status: 'abandoned', code: null });
    expect(await usesOf(link.id)).toBe(0);
    expect(await eventsFor(ref)).toEqual([]);
    expect(await detail(org, link.id)).toMatchObject({
      status: 'active',
      uses: 0,
      submissions: [{ reference_id: ref, status: 'abandoned', code: null, face: null, submitted_at: expect.any(String) }],
    });
    expect(await sweepAt(pastGrace())).toEqual({ settled: 0, abandoned: 0 });
    expect(await usesOf(link.id)).toBe(0);
    // The use came back: the person can send again, and it goes through.
    const again = await submitPage(stack, link.url, { csrf: (await openPage(stack, link.url)).csrf, vnin: FIXTURE_VNIN }, { from: ownAddress() });
    expect(again.status, again.text).toBe(200);
    expect(await usesOf(link.id)).toBe(1);
  });

  it("When the page's settlement and the sweep race for one submission, then it is settled once: one event, the use kept once, and neither settles it again", async () => {
    const org = await stack.createOrg({ units: 5 });
    await linkReceiver(stack, org);
    const link = await makeLink(stack, org.admin.token, { require_face: false, client_ref: 'applicant-race' });
    const ref = await recordedVerification(org, FIXTURE_VNIN, 200);
    await leftPending(link, ref);
    const submission = { linkId: link.id, orgId: org.orgId, clientRef: 'applicant-race', referenceId: ref };
    const byPage = () => settleSubmission(stack.db, submission, { kind: 'ended', status: 'found', code: null });

    const [page, sweep] = await Promise.all([byPage(), sweepAt(pastGrace())]);
    expect(Number(page) + sweep.settled).toBe(1);
    expect(sweep.abandoned).toBe(0);
    const [pageAgain, sweepAgain] = await Promise.all([byPage(), sweepAt(pastGrace())]);
    expect([pageAgain, sweepAgain]).toEqual([false, { settled: 0, abandoned: 0 }]);

    expect(await submissionOf(ref)).toEqual({ status: 'found', code: null });
    expect(await usesOf(link.id)).toBe(1);
    expect((await eventsFor(ref)).map((e) => e.data)).toEqual([{ link_id: link.id, client_ref: 'applicant-race', reference_id: ref, status: 'found', face: null, verdict: 'verified', verdict_reasons: [] }]);
  });
});
