import express, { Router } from 'express';
import type { AppContext } from '../../context.ts';
import { receiveProcessorEvent } from './intake.ts';

/**
 * The payment processor's notifications. No bearer token: the HMAC signature over the raw bytes is
 * the authentication, so this route's own raw parser must be the only one that reads the body (no
 * JSON parser may run before it: re-serialised JSON would not match the signature).
 */
export function webhookRoutes(ctx: AppContext): Router {
  const r = Router();
  r.post('/webhooks/paystack', express.raw({ type: '*/*', limit: '256kb' }), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    await receiveProcessorEvent(ctx, body, req.get('x-paystack-signature'), req.id);
    res.json({ status: 'ok' });
  });
  return r;
}
