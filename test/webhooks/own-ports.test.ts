import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { checkTarget, TARGET_REFUSED, TargetRefused } from '../../src/modules/webhooks/address-guard.ts';
import { ownPorts, targetMode } from '../../src/modules/webhooks/endpoints.ts';

/**
 * The ports `npm start` listens on in the sandbox, as the API and the workers read them from their
 * configuration, and what the guard makes of a loopback receiver on each (names resolved by a stub).
 */
const resolver = async (host: string) => {
  if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
  throw new Error(`ENOTFOUND ${host}`);
};
const refusal = (url: string, own = ownPorts(loadConfig({}), 18080)) =>
  checkTarget(url, targetMode(loadConfig({})), resolver, own).then(
    () => null,
    (err: TargetRefused) => ({ message: err.message, reason: err.reason }),
  );

describe("the sandbox's own ports", () => {
  it("When npm start runs with its defaults, then the API, the payment simulator, the mail sink, the workers' metrics, PostgreSQL and Redis are refused, and the identity simulator is kept for its receiver", () => {
    const own = ownPorts(loadConfig({ WORKER_PROCESSES: '2' }), 18080);
    expect([...own.refused].sort((a, b) => a - b)).toEqual([4020, 4025, 5432, 6379, 8080, 9464, 9465, 18080]);
    expect(own.hooksOnly).toEqual([4010]);
  });

  it('When a loopback receiver names one of them, by address or by name, then it is refused with the one detail; other loopback ports and the receiver path pass', async () => {
    for (const url of ['http://127.0.0.1:4020/__sim/transactions/T/pay', 'http://localhost:8080/v1/me', 'http://[::1]:4025/', 'http://127.0.0.1:18080/', 'http://localhost:4010/sandbox/mail', 'http://127.0.0.1:4010/sandbox/hooks/a/b']) {
      expect(await refusal(url), url).toEqual({ message: TARGET_REFUSED, reason: expect.stringMatching(/own ports|identity simulator/) });
    }
    for (const url of ['http://127.0.0.1:4010/sandbox/hooks/mine', 'http://localhost:4010/sandbox/hooks/mine?status=500', 'http://127.0.0.1:3000/hook']) expect(await refusal(url), url).toBeNull();
  });

  it('When a name does not resolve, then the detail is the same as for any refused address', async () => {
    expect(await refusal('http://nowhere.internal/x')).toEqual({ message: TARGET_REFUSED, reason: 'the host name does not resolve' });
    expect(await refusal('http://10.0.0.1/x')).toEqual({ message: TARGET_REFUSED, reason: 'the host resolves to not a public address' });
  });
});
