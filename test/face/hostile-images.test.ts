import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { QUEUES, queuePrefix } from '../../src/jobs/catalog.ts';
import { SELFIE_REFUSAL_DETAIL } from '../../src/modules/face/rules.ts';
import { startStack, type OrgFixture, type Stack } from '../setup/harness.ts';
import { hugeJpeg, SVG_BOMB, swatch, withDeclaredSize } from '../setup/hostile-images.ts';
import { makeLink, openPage, ownAddress, submitPage } from '../setup/links.ts';
import { until } from '../setup/wait.ts';

/**
 * Selfies sent to hold the face workers: a few hundred bytes of SVG whose filters take minutes to
 * render, a valid JPEG of 49 megapixels of one colour (a few hundred kilobytes that decode for
 * seconds), one whose header declares 64 megapixels, and the formats sharp reads but a phone does
 * not make. The stack runs the real face worker (its own process, the real model).
 */
const hopper = readFileSync('src/simulators/identity-authority/faces/grace-hopper.selfie.jpg');
// The free fixture whose record photo is Grace Hopper's: any member may send it at no cost.
const FIXTURE_NIN = '12345678903';
const consent = () => ({ obtained_at: new Date().toISOString(), channel: 'mobile', notice_version: 'v1' });

let stack: Stack;
let heavy: Buffer;
let faces: Queue;

beforeAll(async () => {
  // A wait long enough that no answer below is a timeout, even on a loaded machine: each one is the
  // worker's own. (The SVG used to hold the worker for minutes, beyond this wait too.)
  stack = await startStack({ face: true, env: { FACE_WAIT_MS: '120000', TRUST_PROXY: 'loopback' } });
  heavy = await hugeJpeg(7000);
  faces = new Queue(QUEUES.face, { connection: { url: inject('redisUrl') }, prefix: queuePrefix(stack.config.REDIS_PREFIX, QUEUES.face) });
}, 120_000);
afterAll(async () => {
  await faces?.close();
  await stack?.close();
});

const face = (org: OrgFixture, selfie: Buffer) =>
  stack.api('POST', '/v1/verify-nin/face', { token: org.member.token, json: { nin: FIXTURE_NIN, reason: 'corporate', consent: consent(), selfie: selfie.toString('base64') } });
const inQueue = async () => {
  const c = await faces.getJobCounts('prioritized', 'waiting', 'active');
  return (c.prioritized ?? 0) + (c.waiting ?? 0) + (c.active ?? 0);
};
/** An ISO-BMFF `ftyp` box with this brand, then filler: how a HEIF (HEIC) file begins. */
const heic = () => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.alloc(4), Buffer.from('mif1heic'), Buffer.alloc(256)]);

describe('selfie formats', () => {
  it('When a selfie is an SVG, a GIF, a TIFF, an AVIF or a HEIF, then 422 selfie_unreadable before any face job is queued, on the API and on a link page', async () => {
    const org = await stack.createOrg({ units: 5 });
    const refused: Record<string, Buffer> = {
      svg: SVG_BOMB,
      gif: await swatch(256).gif().toBuffer(),
      tiff: await swatch(256).tiff().toBuffer(),
      avif: await swatch(256).avif().toBuffer(),
      heic: heic(),
    };
    const before = await faces.getJobCounts('completed', 'failed');
    for (const [format, bytes] of Object.entries(refused)) {
      const r = await face(org, bytes);
      expect(r.status, `${format}: ${r.text}`).toBe(422);
      expect(r.body, format).toMatchObject({ code: 'selfie_unreadable', detail: SELFIE_REFUSAL_DETAIL.selfie_unreadable });
    }
    // Nothing reached a worker (removed jobs leave no count; none was even added: nothing in flight either).
    expect(await faces.getJobCounts('completed', 'failed')).toEqual(before);
    expect(await inQueue()).toBe(0);

    // A stranger on a link page, with a made-up vNIN: the same refusal, in the person's words.
    const link = await makeLink(stack, org.admin.token);
    const { csrf } = await openPage(stack, link.url);
    const sent = await submitPage(stack, link.url, { csrf, vnin: 'ZZ999999999999ZZ', selfie: `data:image/jpeg;base64,${SVG_BOMB.toString('base64')}` }, { from: ownAddress() });
    expect(sent.status, sent.text).toBe(422);
    expect(sent.body).toMatchObject({ code: 'selfie_unreadable', step: 'selfie' });
  });

  it('When a JPEG\'s header declares more than 50 megapixels, then 422 selfie_unreadable from the face worker (its pixels never decoded)', async () => {
    const org = await stack.createOrg();
    const r = await face(org, withDeclaredSize(heavy, 8000, 8000));
    expect(r.status, r.text).toBe(422);
    expect(r.body.code).toBe('selfie_unreadable');
  });

  it('When the selfie is a PNG or a WebP, then it is compared as a JPEG is', async () => {
    const org = await stack.createOrg();
    for (const bytes of [hopper, await sharp(hopper).png().toBuffer(), await sharp(hopper).webp({ quality: 90 }).toBuffer()]) {
      const r = await face(org, bytes);
      expect(r.status, r.text).toBe(200);
      expect(r.body.face).toMatchObject({ status: 'compared', match: true });
    }
  }, 60_000);
});

describe('one organisation\'s hostile images and another\'s face match', () => {
  it('When one organisation sends the SVG bomb, then six 49-megapixel JPEGs and one declaring 64 megapixels, then another organisation\'s face match sent meanwhile is answered 200 before the attacker\'s last answer', async () => {
    const attacker = await stack.createOrg();
    const bystander = await stack.createOrg();
    // The bystander's own baseline: its face match with nothing else running.
    const baseline = await face(bystander, hopper);
    expect(baseline.status, baseline.text).toBe(200);

    const answers: { who: string; status: number; code?: string }[] = [];
    const send = (who: string, org: OrgFixture, selfie: Buffer) =>
      face(org, selfie).then((r) => {
        answers.push({ who, status: r.status, code: r.body.code });
        return r;
      });
    // The SVG first: it used to take the one face worker for minutes. Wait until it is answered or
    // running on the worker, so that whatever follows queues behind it if it can.
    const svg = send('attacker-svg', attacker, SVG_BOMB);
    await until(async () => answers.length > 0 || (await faces.getJobCounts('active')).active! > 0, (v) => v, 30_000);
    const attack = [send('attacker-declared', attacker, withDeclaredSize(heavy, 8000, 8000)), ...Array.from({ length: 6 }, () => send('attacker-jpeg', attacker, heavy))];
    // The bystander asks once all the attacker's JPEGs are queued (or already answered).
    await until(async () => (await inQueue()) + answers.filter((a) => a.who !== 'attacker-svg').length, (n) => n >= 7, 30_000);
    const meanwhile = await send('bystander', bystander, hopper);
    await Promise.all([svg, ...attack]);

    expect(meanwhile.status, meanwhile.text).toBe(200);
    expect(meanwhile.body.face).toMatchObject({ status: 'compared', match: true, confidence: baseline.body.face.confidence });
    // Every hostile image was refused by what it is, none timed out.
    expect(answers.find((a) => a.who === 'attacker-svg')).toEqual({ who: 'attacker-svg', status: 422, code: 'selfie_unreadable' });
    expect(answers.find((a) => a.who === 'attacker-declared')).toEqual({ who: 'attacker-declared', status: 422, code: 'selfie_unreadable' });
    for (const a of answers.filter((x) => x.who === 'attacker-jpeg')) {
      expect(a.status).toBe(422);
      expect(['selfie_no_face', 'selfie_unreadable']).toContain(a.code);
    }
    // Taking turns: the bystander's two jobs (check, comparison) did not wait for the attacker's queue.
    const order = answers.map((a) => a.who);
    expect(order.indexOf('bystander')).toBeLessThan(order.lastIndexOf('attacker-jpeg'));
    expect(await inQueue()).toBe(0);
  }, 300_000);
});
