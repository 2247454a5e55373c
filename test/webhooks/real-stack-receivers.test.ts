import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realStackReason } from '../../src/config.ts';
import { startStack, type Stack } from '../setup/harness.ts';
import { TARGET_REFUSED } from '../../src/modules/webhooks/address-guard.ts';

/**
 * Webhook target modes over the API, on a stack configured as a real one (a non-loopback identity authority,
 * so realStackReason names it): http and loopback receivers are refused at registration, as metadata
 * addresses are in every mode. (The sandbox's side, http on loopback accepted and metadata refused, is
 * endpoints-and-deliveries.test.ts; each mode's rules in full, target-modes.test.ts.)
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    workers: false,
    env: {
      // Never called here: no verification runs. Fresh secrets, as a real stack must have.
      IDENTITY_DIALECT: 'dojah',
      IDENTITY_BASE_URL: 'https://api.dojah.io',
      JWT_SECRET: 'x'.repeat(40),
      ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      VNIN_HASH_KEY: 'v'.repeat(40),
      SUBJECT_HASH_KEY: 's'.repeat(40),
      NIMC_ENTERPRISE_CODE: '1138183',
    },
  });
});
afterAll(async () => stack?.close());

describe('webhook receivers on a real stack', () => {
  it('When a real stack is configured, then http, loopback (by address or by name) and metadata receivers are refused with 400, and an endpoint cannot be moved to one', async () => {
    expect(realStackReason(stack.config)).toBe('IDENTITY_BASE_URL is not a loopback address');
    const org = await stack.createOrg();
    const register = (url: string) => stack.api('POST', '/v1/webhook-endpoints', { token: org.admin.token, json: { url, events: ['*'] } });
    const port = new URL(stack.identitySim.url).port;
    // Every refused address answers the one same detail (which rule refused it is not told).
    const refused: [string, RegExp | string][] = [
      [`http://127.0.0.1:${port}/sandbox/hooks/real`, /must be https/],
      [`https://127.0.0.1:${port}/sandbox/hooks/real`, TARGET_REFUSED],
      [`https://localhost:${port}/sandbox/hooks/real`, TARGET_REFUSED],
      ['https://[::1]/x', TARGET_REFUSED],
      ['https://169.254.169.254/latest/meta-data', TARGET_REFUSED],
      ['https://[fd00:ec2::254]/', TARGET_REFUSED],
      ['https://10.1.2.3/hook', TARGET_REFUSED],
    ];
    for (const [url, why] of refused) {
      const r = await register(url);
      expect(r.status, url).toBe(400);
      if (typeof why === 'string') expect(r.body.detail, url).toBe(why);
      else expect(r.body.detail, url).toMatch(why);
    }
    // A public receiver is accepted (an IP literal: no DNS on this machine), and cannot be moved to loopback.
    const ok = await register('https://93.184.215.14/hooks');
    expect(ok.status, ok.text).toBe(201);
    const moved = await stack.api('PATCH', `/v1/webhook-endpoints/${ok.body.id}`, { token: org.admin.token, json: { url: `http://127.0.0.1:${port}/sandbox/hooks/real` } });
    expect(moved.status).toBe(400);
  });
});
