import { describe, expect, it } from 'vitest';
import { addressRefusal } from '../../src/modules/webhooks/address-guard.ts';

const strict = { sandbox: false };

describe('webhook targets must be public addresses', () => {
  it('When an IPv6 form carries a private or loopback IPv4 address, or names a non-public block, then it is refused outside the sandbox', () => {
    for (const a of ['::127.0.0.1', '::7f00:1', '::ffff:0:a00:1', '::ffff:0:7f00:1', '100::1', 'fec0::1', '::', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', 'fd00:ec2::254', '[::1]']) {
      expect(addressRefusal(a, strict), a).not.toBeNull();
    }
  });

  it('When an address is public, then it may be reached', () => {
    for (const a of ['8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(addressRefusal(a, strict), a).toBeNull();
  });
});
