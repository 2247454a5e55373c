import express, { Router, type Request, type Response } from 'express';

/**
 * The sandbox's webhook receiver, for trying the service's signed webhooks on one machine:
 * `POST /sandbox/hooks/{name}` keeps what it receives (headers lower-cased, the body as raw text) and
 * answers 200, or `?status=N`, after `?delay_ms=N`; `GET /sandbox/hooks/{name}` lists them newest first.
 * In memory only, the last MAX_KEPT per name and MAX_NAMES names; no key, like the mail sink.
 */
const MAX_KEPT = 200;
const MAX_NAMES = 100;
const MAX_DELAY_MS = 60_000;
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export type ReceivedHook = { received_at: string; headers: Record<string, string>; body: string };

export function hookRoutes(): Router {
  const kept = new Map<string, ReceivedHook[]>();
  const r = Router();

  r.post('/sandbox/hooks/:name', express.text({ type: () => true, limit: '256kb' }), (req: Request, res: Response) => {
    const name = String(req.params.name);
    if (!NAME.test(name)) return void res.status(404).json({ detail: 'a hook name is 1 to 64 letters, digits, _ or -' });
    const status = req.query.status === undefined ? 200 : Number(req.query.status);
    const delay = req.query.delay_ms === undefined ? 0 : Number(req.query.delay_ms);
    if (!Number.isInteger(status) || status < 200 || status > 599) return void res.status(400).json({ detail: 'status must be an integer from 200 to 599' });
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_MS) return void res.status(400).json({ detail: `delay_ms must be an integer from 0 to ${MAX_DELAY_MS}` });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    let list = kept.get(name);
    if (!list) {
      if (kept.size >= MAX_NAMES) kept.delete(kept.keys().next().value!);
      kept.set(name, (list = []));
    }
    list.unshift({ received_at: new Date().toISOString(), headers, body: typeof req.body === 'string' ? req.body : '' });
    list.length = Math.min(list.length, MAX_KEPT);
    const answer = () => {
      if (!res.writable) return;
      res.status(status).json({ received: true });
    };
    if (delay > 0) {
      const timer = setTimeout(answer, delay);
      res.on('close', () => clearTimeout(timer));
    } else answer();
  });

  r.get('/sandbox/hooks/:name', (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ data: kept.get(String(req.params.name)) ?? [] });
  });

  return r;
}
