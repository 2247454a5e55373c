import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import type { FaceEngine } from '../../src/modules/face/index.ts';
import MESSAGES from '../../src/modules/links/page/messages.en.json' with { type: 'json' };
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { makeLink, openPage, ownAddress, submitPage } from '../setup/links.ts';
import { until } from '../setup/wait.ts';

/**
 * What the person on a link page is told when the face comparison cannot be made: the face worker
 * runs in this process with an engine of the test's own that never answers a selfie until the file
 * ends, so every face job outlives FACE_WAIT_MS. One face match in flight per organisation
 * (FACE_ORG_MAX_IN_FLIGHT=1), so a second submission while one is held meets the cap.
 */
const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
const FIXTURE_VNIN = 'AA000000000001ZZ';

let held: (() => void)[] = [];
const engine: FaceEngine = {
  async selfie() {
    await new Promise<void>((resolve) => held.push(resolve));
    return { descriptor: new Float32Array(128) };
  },
  reference: async () => new Float32Array(128),
  distance: () => 0.2,
};

let stack: Stack;
let worker: RunningFaceWorker;

beforeAll(async () => {
  stack = await startStack({ env: { FACE_WAIT_MS: '4000', FACE_NICE: '0', FACE_ORG_MAX_IN_FLIGHT: '1', TRUST_PROXY: 'loopback' } });
  worker = await startFaceWorker(stack.config, createLogger({ level: 'silent' }), { engine });
}, 60_000);
afterAll(async () => {
  for (const release of held) release();
  held = [];
  await worker?.close();
  await stack?.close();
});

describe('a face fault on a link page', () => {
  it('When the face comparison on a link page is not answered in time, then the person is told the comparison could not be done and to try again, not that NIMC could not be reached', async () => {
    const org = await stack.createOrg({ units: 5 });
    const link = await makeLink(stack, org.admin.token);
    const { csrf } = await openPage(stack, link.url);
    const sent = await submitPage(stack, link.url, { csrf, vnin: FIXTURE_VNIN, selfie: `data:image/jpeg;base64,${selfie}` }, { from: ownAddress() });
    expect(sent.status, sent.text).toBe(503);
    expect(sent.body).toEqual({ detail: MESSAGES.errors.face_unavailable, code: 'face_timeout', step: 'send' });
    expect(sent.body.detail).toMatch(/comparison took too long or could not be done\. Try again/);
    expect(sent.body.detail).not.toMatch(/could not reach NIMC/);
  });

  it("When the organisation's face matches are all in flight, then the person is told the comparison could not be done just now (429 face_in_flight_cap), not that they tried too often", async () => {
    const org = await stack.createOrg({ units: 5 });
    const link = await makeLink(stack, org.admin.token, { max_uses: 3 });
    const { csrf } = await openPage(stack, link.url);
    const body = { csrf, vnin: FIXTURE_VNIN, selfie: `data:image/jpeg;base64,${selfie}` };
    const first = submitPage(stack, link.url, body, { from: ownAddress() });
    // The first submission's face match was admitted (queued or running: the face fair share's
    // in-flight set of the organisation): it holds the organisation's one turn until its wait ends.
    const redis = new Redis(stack.config.REDIS_URL);
    try {
      await until(() => redis.zcard(`${stack.config.REDIS_PREFIX}:{face}:inflight:${org.orgId}`), (n) => n >= 1);
    } finally {
      redis.disconnect();
    }
    const second = await submitPage(stack, link.url, body, { from: ownAddress() });
    expect(second.status, second.text).toBe(429);
    expect(second.body).toEqual({ detail: MESSAGES.errors.face_unavailable, code: 'face_in_flight_cap', step: 'send' });
    expect(second.body.detail).not.toMatch(/Too many tries/);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await first).status).toBe(503);
  });
});
