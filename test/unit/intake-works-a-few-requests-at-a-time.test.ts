import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIntake, leaveIntake } from '../../src/lib/intake.ts';
import { waitFor } from '../setup/wait.ts';

/**
 * The intake slot (src/lib/intake.ts) over real HTTP, with one slot: a request holds it from its
 * handler's start until the handler says its work is queued (leaveIntake) or the response ends;
 * the next waits meanwhile; a caller gone while waiting takes no slot. Each request's handler waits
 * for the test's word at its steps, so every order is made by events, never by time.
 */
type Step = { entered: Promise<void>; queue(): void; answer(): void };
const steps = new Map<string, { entered: () => void; queued: Promise<void>; answered: Promise<void> }>();
const entered: string[] = [];

function step(name: string): Step {
  let enter!: () => void;
  let queue!: () => void;
  let answer!: () => void;
  const e = new Promise<void>((r) => (enter = r));
  steps.set(name, { entered: enter, queued: new Promise<void>((r) => (queue = r)), answered: new Promise<void>((r) => (answer = r)) });
  return { entered: e, queue, answer };
}

let server: Server;
let url: string;
const registry = new Registry();
const intake = createIntake({ slots: 1, registry, gauge: { name: 'test_intake', help: 'test' } });

beforeAll(async () => {
  const app = express();
  app.post('/work/:name', express.json(), intake.slot, async (req, res) => {
    const name = String(req.params.name);
    const s = steps.get(name)!;
    entered.push(name);
    s.entered();
    await s.queued;
    leaveIntake();
    await s.answered;
    res.json({ name });
  });
  // A request answered without queuing anything (refused, say): it never calls leaveIntake.
  app.post('/answer/:name', express.json(), intake.slot, async (req, res) => {
    const name = String(req.params.name);
    const s = steps.get(name)!;
    entered.push(name);
    s.entered();
    await s.answered;
    res.status(422).json({ name });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const gauge = async () => {
  const m = (await registry.getSingleMetric('test_intake')!.get()).values;
  return { taken: m.find((v) => v.labels.state === 'taken')?.value, waiting: m.find((v) => v.labels.state === 'waiting')?.value };
};
const post = (name: string, signal?: AbortSignal, route = 'work') =>
  fetch(`${url}/${route}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', ...(signal ? { signal } : {}) });

describe('an intake of one slot', () => {
  it('When a request holds the slot, then the next waits until the first has queued its work, not until it is answered', async () => {
    const a = step('a1');
    const b = step('b1');
    const first = post('a1');
    await a.entered;
    const second = post('b1');
    await waitFor(async () => (await gauge()).waiting === 1, { what: 'the second request waiting for the slot' });
    expect(entered.filter((n) => n.endsWith('1'))).toEqual(['a1']);
    a.queue();
    await b.entered;
    // The first is not answered yet: its slot went back when its work was queued.
    expect(await gauge()).toEqual({ taken: 1, waiting: 0 });
    b.queue();
    a.answer();
    b.answer();
    expect((await Promise.all([first, second])).map((r) => r.status)).toEqual([200, 200]);
    expect(await gauge()).toEqual({ taken: 0, waiting: 0 });
  });

  it('When a request ends without queuing anything, then its slot goes back with its answer', async () => {
    const a = step('a2');
    const b = step('b2');
    const first = post('a2', undefined, 'answer');
    await a.entered;
    const second = post('b2');
    await waitFor(async () => (await gauge()).waiting === 1, { what: 'the second request waiting for the slot' });
    a.answer();
    expect((await first).status).toBe(422);
    await b.entered;
    b.queue();
    b.answer();
    expect((await second).status).toBe(200);
    expect(await gauge()).toEqual({ taken: 0, waiting: 0 });
  });

  it('When a caller goes away while it waits for the slot, then it takes none: the request after it gets the slot', async () => {
    const a = step('a3');
    step('gone3');
    const c = step('c3');
    const first = post('a3');
    await a.entered;
    const away = new AbortController();
    const gone = post('gone3', away.signal).catch(() => 'aborted');
    await waitFor(async () => (await gauge()).waiting === 1, { what: 'the request that will go away waiting for the slot' });
    away.abort();
    expect(await gone).toBe('aborted');
    const third = post('c3');
    await waitFor(async () => (await gauge()).waiting === 2, { what: 'the third request waiting behind the gone one' });
    a.queue();
    await c.entered;
    expect(entered).not.toContain('gone3');
    c.queue();
    a.answer();
    c.answer();
    expect((await Promise.all([first, third])).map((r) => r.status)).toEqual([200, 200]);
    expect(await gauge()).toEqual({ taken: 0, waiting: 0 });
  });
});
