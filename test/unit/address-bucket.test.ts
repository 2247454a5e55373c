import { describe, expect, it } from 'vitest';
import { addressBucket } from '../../src/lib/address-bucket.ts';

describe('addressBucket: what a per-address limit counts', () => {
  it('When the address is IPv4, then it is counted as itself', () => {
    expect(addressBucket('198.51.100.7')).toBe('198.51.100.7');
  });

  it('When addresses are IPv6 in one /64, however written, then they count as one; another /64 is another', () => {
    const one = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:0:0:0:9', '2001:db8:1:2:a:b:c:d%eth0', '2001:db8:1:2::192.0.2.1'];
    expect(new Set(one.map(addressBucket))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(addressBucket('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('When an IPv4 address comes mapped into IPv6, then it is counted as that IPv4 address, not as the mapped /64', () => {
    expect(addressBucket('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(addressBucket('::FFFF:c633:6407')).toBe('198.51.100.7');
    expect(addressBucket('::ffff:198.51.100.8')).toBe('198.51.100.8');
  });

  it('When the address is not an IP address, then it is counted as it is', () => {
    expect(addressBucket('unknown')).toBe('unknown');
  });
});
