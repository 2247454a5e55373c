import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawChallenges, sessionToJudge, settleSession } from '../../src/modules/liveness/sessions.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';

const CAP = 3;
const TTL = 120;
let stack: Stack;
let org: OrgFixture;
let other: OrgFixture;

beforeAll(async () => {
  stack = await startStack({ workers: false, manualClock: new Date('2026-03-02T10:00:00Z'), env: { LIVENESS_OPEN_SESSIONS_PER_ORG: String(CAP), LIVENESS_SESSION_TTL_SECONDS: String(TTL) } });
  org = await stack.createOrg({ units: 0 });
  other = await stack.createOrg({ units: 0 });
});
afterAll(async () => stack?.close());

const create = (token: string) => stack.api('POST', '/v1/liveness/sessions', { token });
const read = (token: string, id: string) => stack.api('GET', `/v1/liveness/sessions/${id}`, { token });

describe('liveness sessions', () => {
  it('When a team member starts a session, then it is open with the three poses once each and expires after the TTL; reading it gives the same', async () => {
    const made = await create(org.member.token);
    expect(made.status).toBe(201);
    expect(made.body.id).toMatch(/^lvs_[0-9a-f]{24}$/);
    expect([...made.body.challenges].sort()).toEqual(['look_up', 'turn_left', 'turn_right']);
    expect(made.body).toMatchObject({ status: 'open', expires_at: new Date(stack.clock.now().getTime() + TTL * 1000).toISOString() });
    expect(made.body.result).toBeUndefined();
    const got = await read(org.admin.token, made.body.id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(made.body);
    await stack.db.query(sql.unsafe`UPDATE liveness_sessions SET status = 'failed', judged_at = now(), result = '{"status":"failed","reasons":["still_image"],"steps":[]}' WHERE id = ${made.body.id}`);
  });

  it("When another organisation reads a session, or an id that does not exist or is malformed, then 404 liveness_session_not_found", async () => {
    const made = await create(org.admin.token);
    for (const [token, id] of [[other.admin.token, made.body.id], [org.admin.token, 'lvs_000000000000000000000000'], [org.admin.token, 'nonsense']] as const) {
      const got = await read(token, id);
      expect(got.status).toBe(404);
      expect(got.body).toMatchObject({ code: 'liveness_session_not_found' });
    }
    await stack.db.query(sql.unsafe`UPDATE liveness_sessions SET status = 'passed', judged_at = now(), result = '{"status":"passed","reasons":[],"steps":[]}' WHERE id = ${made.body.id}`);
  });

  it('When a session is judged, used, or left past its time, then its status says so, with the result once judged', async () => {
    const judged = await create(org.admin.token);
    const result = { status: 'failed', reasons: ['pose_not_reached'], steps: [{ step: 'front', passed: true, yaw: 0, pitch: 0, frames: 1 }] };
    await stack.db.query(sql.unsafe`UPDATE liveness_sessions SET status = 'failed', judged_at = now(), result = ${JSON.stringify(result)}::jsonb WHERE id = ${judged.body.id}`);
    expect((await read(org.admin.token, judged.body.id)).body).toMatchObject({ status: 'failed', result });
    await stack.db.query(sql.unsafe`UPDATE liveness_sessions SET status = 'used', result = jsonb_set(result, '{status}', '"passed"') WHERE id = ${judged.body.id}`);
    expect((await read(org.admin.token, judged.body.id)).body).toMatchObject({ status: 'used', result: { status: 'passed' } });

    const left = await create(org.admin.token);
    stack.clock.advance!(TTL * 1000);
    expect((await read(org.admin.token, left.body.id)).body).toMatchObject({ status: 'expired' });
    expect((await read(org.admin.token, left.body.id)).body.result).toBeUndefined();
  });

  it('When the organisation holds its cap of open sessions, then one more is 429 liveness_session_cap; another organisation is not held back, and an expired one frees a place', async () => {
    const before = await stack.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM liveness_sessions WHERE org_id = ${org.orgId} AND status = 'open' AND expires_at > ${sql.timestamp(stack.clock.now())}`);
    for (let i = Number(before); i < CAP; i++) expect((await create(org.admin.token)).status).toBe(201);
    const refused = await create(org.admin.token);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'liveness_session_cap', limit: CAP });
    expect(refused.headers.get('retry-after')).toBe(String(TTL));
    expect((await create(other.admin.token)).status).toBe(201);
    stack.clock.advance!(TTL * 1000);
    expect((await create(org.admin.token)).status).toBe(201);
  });

  it('When many sessions are drawn, then all six orders of the three poses occur, each in the proportion chance gives', () => {
    const counts = new Map<string, number>();
    const N = 6000;
    for (let i = 0; i < N; i++) {
      const k = drawChallenges().join(',');
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    expect(counts.size).toBe(6);
    // Each order is 1/6: 1000 expected, standard deviation about 29; 800..1200 is more than 6 of them.
    for (const n of counts.values()) expect(n).toBeGreaterThan(800), expect(n).toBeLessThan(1200);
  });

  it('When GET /sandbox/liveness is asked on the identity simulator, then each sandbox person has a live, a flat and a still set: front first, each pose, JPEG, how made and licence', async () => {
    const r = await fetch(`${stack.identitySim.url}/sandbox/liveness`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { data: { nin: string; licence: string; sets: { kind: string; passes: boolean; how_made: string; frames: { step: string; image: string; measured: { yaw: number; pitch: number } }[] }[] }[] };
    expect(body.data.map((p) => p.nin)).toEqual(['70000000001', '70000000002']);
    for (const person of body.data) {
      expect(person.licence).toMatch(/public domain/i);
      expect(person.sets.map((s) => [s.kind, s.passes])).toEqual([['live', true], ['flat', false], ['still', false]]);
      const live = person.sets[0]!;
      expect(live.frames.map((f) => f.step)).toEqual(['front', 'turn_left', 'turn_left', 'turn_right', 'turn_right', 'look_up', 'look_up']);
      for (const set of person.sets) {
        expect(set.how_made.length).toBeGreaterThan(20);
        expect(new Set(set.frames.map((f) => f.step))).toEqual(new Set(['front', 'turn_left', 'turn_right', 'look_up']));
        for (const f of set.frames) expect(Buffer.from(f.image, 'base64').subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
      }
      expect(live.frames.filter((f) => f.step === 'turn_left').some((f) => f.measured.yaw >= 20)).toBe(true);
    }
    // Asked again, the same frames come as other bytes (a salted JPEG comment), so a walk can be run again.
    const again = (await (await fetch(`${stack.identitySim.url}/sandbox/liveness`)).json()) as typeof body;
    const first = body.data[0]!.sets[0]!.frames[0]!.image;
    const second = again.data[0]!.sets[0]!.frames[0]!.image;
    expect(second).not.toBe(first);
    expect(Buffer.from(second, 'base64').subarray(0, 4)).toEqual(Buffer.from([0xff, 0xd8, 0xff, 0xfe]));
  });

  it('When a session is to be judged, then an open one is given with its challenges; judged once it is 409 liveness_session_used, expired 410, another organisation\'s 404', async () => {
    const made = (await create(org.admin.token)).body;
    const expired = (await create(org.admin.token)).body;
    const deps = { db: stack.db, clock: stack.clock, config: stack.config };
    expect(await sessionToJudge(deps, org.orgId, made.id)).toMatchObject({ id: made.id, challenges: made.challenges });
    await expect(sessionToJudge(deps, other.orgId, made.id)).rejects.toMatchObject({ status: 404, extra: { code: 'liveness_session_not_found' } });
    const result = { status: 'failed' as const, reasons: ['still_image' as const], steps: [] };
    await settleSession(deps, org.orgId, made.id, result);
    expect((await read(org.admin.token, made.id)).body).toMatchObject({ status: 'failed', result });
    await expect(sessionToJudge(deps, org.orgId, made.id)).rejects.toMatchObject({ status: 409, extra: { code: 'liveness_session_used' } });
    await expect(settleSession(deps, org.orgId, made.id, { ...result, status: 'passed', reasons: [] })).rejects.toMatchObject({ status: 409 });
    stack.clock.advance!(TTL * 1000);
    await expect(sessionToJudge(deps, org.orgId, expired.id)).rejects.toMatchObject({ status: 410, extra: { code: 'liveness_session_expired' } });
    await expect(settleSession(deps, org.orgId, expired.id, result)).rejects.toMatchObject({ status: 410 });
  });
});
