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
 * Face match bodies are taken in FACE_INTAKE_PER_PROCESS at a time (here 1): a body waits, unread,
 * while another is read, decoded and queued; a request gives its slot back once it has queued its
 * job (not when it is answered), and a caller gone while it waited takes no slot away. Proven by
 * events: the `face_intake` gauge, the face queue's jobs and a test engine that holds each
 * selfie until let go. Never by time.
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
const waiting = async () => (await intake()).waiting;
/** A half-sent body holding the one slot. */
const holdingTheSlot = async (org: OrgFixture) => {
  const first = halfSent(org);
  await waitFor(async () => (await intake()).taken === 1, { what: 'the half-sent face match to take the intake slot' });
  return first;
};
const facesInFlight = async () => {
  const c = await faces.getJobCounts('prioritized', 'waiting', 'active');
  return (c.prioritized ?? 0) + (c.waiting ?? 0) + (c.active ?? 0);
};

/** A face match whose body is sent in two halves: the second only when `finish()` is called. */
function halfSent(org: OrgFixture): { finish(): void; abort(): void; answer: Promise<{ status: number; text: string }> } {
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
  req.write(whole.subarray(0, whole.length >> 1));
  return { finish: () => req.end(whole.subarray(whole.length >> 1)), abort: () => req.destroy(), answer };
}

describe('face match bodies taken in a few at a time', () => {
  it('When one face match body is still arriving and the intake has one slot, then the next waits unread and is answered once the first is read', async () => {
    const org = await stack.createOrg();
    const first = await holdingTheSlot(org);
    const next = face(org);
    await waitFor(async () => (await waiting()) === 1, { what: 'the second face match waiting for the intake slot' });
    first.finish();
    const [a, b] = await Promise.all([first.answer, next]);
    expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([200, 200]);
    expect(await intake()).toEqual({ taken: 0, waiting: 0 });
  });

  it('When a face match has queued its job and waits for a face worker, then its intake slot is already free: the next one is read and queued beside it', async () => {
    const org = await stack.createOrg();
    engine.holding = true;
    const first = face(org);
    await waitFor(() => engine.held === 1, { what: 'the first comparison to run (and hold)' });
    const second = face(org);
    // Read, decoded and queued while the first still waits: the slot went back when its job was queued.
    await waitFor(async () => (await facesInFlight()) === 2, { what: 'the second face job in the queue beside the held one' });
    expect(await waiting()).toBe(0);
    engine.letGo();
    expect((await Promise.all([first, second])).map((r) => r.status)).toEqual([200, 200]);
  });

  it('When a caller goes away while it waits for the intake slot, then it takes no slot: the face matches after it are answered', async () => {
    const org = await stack.createOrg();
    const first = await holdingTheSlot(org);
    const gone = halfSent(org);
    await waitFor(async () => (await waiting()) === 1, { what: 'the second face match waiting for the intake slot' });
    gone.abort();
    await gone.answer.catch(() => undefined);
    first.finish();
    expect((await first.answer).status).toBe(200);
    expect((await face(org)).status).toBe(200);
    expect(await intake()).toEqual({ taken: 0, waiting: 0 });
  });
});
