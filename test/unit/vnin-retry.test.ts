import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createIdentityAuthority } from '../../src/adapters/identity-authority/index.ts';
import { resilient, upstreamRetry } from '../../src/adapters/identity-authority/resilient.ts';
import { startIdentitySimulator } from '../../src/simulators/identity-authority/server.ts';

/** A vNIN is retried only when the call never reached the authority. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function counted(baseUrl: string) {
  let attempts = 0;
  const identity = resilient(
    createIdentityAuthority({ dialect: 'sandbox', baseUrl, apiKey: '', timeoutMs: 500 }),
    upstreamRetry({ maxAttempts: 3, backoffMs: 1, useOnce: true }, { attempted: () => void attempts++ }),
    { attempted: () => void attempts++ },
  );
  return { identity, attempts: () => attempts };
}

describe('one attempt for a vNIN', () => {
  it('When the connection is refused, then the call never left and is retried up to the attempts', async () => {
    const c = counted(`http://127.0.0.1:${await closedPort()}`);
    await expect(c.identity.lookupVnin({ vnin: 'AB012345678910YZ', reason: 'corporate' })).rejects.toMatchObject({ unsent: true });
    expect(c.attempts()).toBe(3);
  });

  it('When the authority answered 503 or 429, then a 503 is not retried and a 429 is', async () => {
    const sim = await startIdentitySimulator({ port: 0 });
    try {
      const issued = async (nin: string) => {
        const res = await fetch(`${sim.url}/sandbox/vnin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nin, enterprise_code: '000000' }) });
        return ((await res.json()) as { vnin: string }).vnin;
      };
      const failing = counted(sim.url);
      await expect(failing.identity.lookupVnin({ vnin: await issued('50010000003'), reason: 'corporate' })).rejects.toMatchObject({ status: 503 });
      expect(failing.attempts()).toBe(1);
      const limited = counted(sim.url);
      await expect(limited.identity.lookupVnin({ vnin: await issued('50030000003'), reason: 'corporate' })).rejects.toMatchObject({ status: 429 });
      expect(limited.attempts()).toBe(3);
    } finally {
      await sim.close();
    }
  });
});
