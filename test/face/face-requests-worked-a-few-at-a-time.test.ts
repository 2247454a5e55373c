import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startFaceWorker, type RunningFaceWorker } from '../../workers/face.ts';
import { holdingFaceEngine } from '../setup/face-match.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * Face match requests are worked on FACE_INTAKE_PER_PROCESS at a time (here 1), through the real route
 * and face queue: a request gives its slot back once it has queued its job (not when it is answered),
 * and a body still arriving holds no slot. Proven by events (answers, the `face_intake` gauge, the face
 * queue's jobs, a test engine that holds each selfie until let go), never by time. The slot's own
 * rules (who waits, a caller gone while waiting) are proven in unit/intake-works-a-few-requests-at-a-time.
 */
const selfie = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg').toString('base64');
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' });
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;

const engine = holdingFaceEngine();

let stack: Stack;
let worker: RunningFaceWorker;
let faces: Queue;

beforeAll(async () => {
  stack = await startStack({ env: { FACE_INTAKE_PER_PROCESS: '1', FACE_NICE: '0', METRICS_TOKEN } });
  worker = await startFaceWorker(stack.config, createLogger({ level: 'silent' }), { engine: engine.engine });
  faces = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
}, 60_000);
afterEach(() => engine.letGo());
afterAll(async () => {
  engine.letGo();
  await faces?.close();
  await worker?.close();
  await stack?.close();
});

const body = () => JSON.stringify({ nin: '12345678903', reason: 'corporate', consent: consent(), selfie });
const face = (org: OrgFixture) => stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: JSON.parse(body()) });
/** The `face_intake` gauge: slots taken, and face matches waiting for one. */
const intake = async () => {
  const text = (await stack.api('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
  const of = (state: string) => Number(new RegExp(`^face_intake\\{[^}]*state="${state}"[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 'NaN');
  return { taken: of('taken'), waiting: of('waiting') };
};
const facesInFlight = async () => {
  const c = await faces.getJobCounts('prioritized', 'waiting', 'active');
  return (c.prioritized ?? 0) + (c.waiting ?? 0) + (c.active ?? 0);
};

/**
 * A face match whose body is sent in two halves: the second only when `finish()` is called. Resolves
 * once the first half is handed to the connection, so the API is reading it before anything else is sent.
 */
async function halfSent(org: OrgFixture): Promise<{ finish(): void; answer: Promise<{ status: number; text: string }> }> {
  const whole = Buffer.from(body());
  const url = new URL('/v1/verify-nin/face', stack.url);
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req = request(url, { method: 'POST', headers: { authorization: `Bearer ${org.member.token}`, 'content-type': 'application/json', 'content-length': whole.length } }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
  await new Promise<void>((resolve, reject) => req.write(whole.subarray(0, whole.length >> 1), (err) => (err ? reject(err) : resolve())));
  return { finish: () => req.end(whole.subarray(whole.length >> 1)), answer };
}

describe('face match requests worked on a few at a time', () => {
  it('When a face match body is still arriving, then it holds no intake slot: the next face match is answered meanwhile, and the first once its body is whole', async () => {
    const org = await stack.createOrg();
    const slow = await halfSent(org);
    const next = await face(org);
    expect(next.status, next.text).toBe(200);
    expect(await intake()).toEqual({ taken: 0, waiting: 0 });
    slow.finish();
    const first = await slow.answer;
    expect(first.status, first.text).toBe(200);
  });

  it('When a face match has queued its job and waits for a face worker, then its intake slot is already free: the next one is read and queued beside it', async () => {
    const org = await stack.createOrg();
    engine.holding = true;
    const first = face(org);
    await waitFor(() => engine.held === 1, { what: 'the first comparison to run (and hold)' });
    const second = face(org);
    // Read, decoded and queued while the first still waits: the slot went back when its job was queued.
    await waitFor(async () => (await facesInFlight()) === 2, { what: 'the second face job in the queue beside the held one' });
    expect((await intake()).waiting).toBe(0);
    engine.letGo();
    expect((await Promise.all([first, second])).map((r) => r.status)).toEqual([200, 200]);
  });
});
