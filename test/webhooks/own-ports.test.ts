import type { NetworkInterfaceInfo } from 'node:os';
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
  if (host === 'me.internal') return [{ address: '10.1.2.3', family: 4 }];
  throw new Error(`ENOTFOUND ${host}`);
};
const refusal = (url: string, own = ownPorts(loadConfig({}), 18080)) =>
  checkTarget(url, targetMode(loadConfig({})), resolver, own).then(
    () => null,
    (err: TargetRefused) => ({ message: err.message, reason: err.reason }),
  );

describe("the sandbox's own ports", () => {
  it("When npm start runs with its defaults, then the API, the payment simulator, the mail sink, the workers' and the face worker's metrics, PostgreSQL and Redis are refused, and the identity simulator is kept for its receiver", () => {
    const own = ownPorts(loadConfig({ WORKER_PROCESSES: '2' }), 18080);
    expect([...own.refused].sort((a, b) => a - b)).toEqual([4020, 4025, 5432, 6379, 8080, 9464, 9465, 9480, 18080]);
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

  it("When a receiver names one of this host's interface addresses (the API listens on 0.0.0.0), then it is judged as loopback: the service's ports refused with the one detail, other ports passing in the sandbox, every port refused outside it", async () => {
    const nic = (address: string, family: 'IPv4' | 'IPv6') => ({ address, family, netmask: '', mac: '00:00:00:00:00:00', internal: false, cidr: null, scopeid: 0 }) as NetworkInterfaceInfo;
    const interfaces = { lo: [nic('127.0.0.1', 'IPv4'), nic('::1', 'IPv6')], eth0: [nic('10.1.2.3', 'IPv4'), nic('2001:db8:1::5', 'IPv6'), nic('fe80::1%eth0', 'IPv6')], wan0: [nic('81.2.69.160', 'IPv4')] };
    const own = ownPorts(loadConfig({}), 18080, interfaces);
    for (const url of ['http://10.1.2.3:8080/v1/me', 'http://10.1.2.3:18080/', 'http://me.internal:9464/metrics', 'http://[2001:db8:1:0::5]:4020/', 'http://81.2.69.160:8080/', 'http://[::ffff:10.1.2.3]:8080/', 'http://10.1.2.3:4010/sandbox/mail']) {
      expect(await refusal(url, own), url).toEqual({ message: TARGET_REFUSED, reason: expect.stringMatching(/own ports|identity simulator/) });
    }
    for (const url of ['http://10.1.2.3:3000/hook', 'http://me.internal:3000/hook', 'http://[2001:db8:1::5]:3000/', 'http://10.1.2.3:4010/sandbox/hooks/mine']) expect(await refusal(url, own), url).toBeNull();
    // Another host on the same private network is not this host: still not public.
    expect(await refusal('http://10.1.2.4:3000/hook', own)).toEqual({ message: TARGET_REFUSED, reason: 'the host resolves to not a public address' });
    // An interface's link-local address stays refused in every mode.
    expect(await refusal('http://[fe80::1]:3000/', own)).toEqual({ message: TARGET_REFUSED, reason: expect.stringMatching(/link-local/) });

    // Outside the sandbox this host's public address is refused as loopback is; another public address passes.
    const strict = (url: string) =>
      checkTarget(url, { sandbox: false }, resolver, own).then(
        () => null,
        (err: TargetRefused) => ({ message: err.message, reason: err.reason }),
      );
    for (const url of ['https://81.2.69.160:8080/', 'https://81.2.69.160/hook']) expect(await strict(url), url).toEqual({ message: TARGET_REFUSED, reason: 'the host resolves to a loopback address' });
    expect(await strict('https://81.2.69.161/hook')).toBeNull();
  });
});
