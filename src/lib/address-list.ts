import { BlockList, isIP } from 'node:net';

/**
 * Addresses and CIDR ranges (IPv4 and IPv6) an API client may be used from. Node's BlockList does
 * the matching, IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) included, so no library is needed.
 */
export type AddressEntry = { entry: string; everyAddress: boolean } | { error: string };

/**
 * One entry, normalised, and whether it matches every address of a family (so that an administrator
 * confirms it with `allow_any`): a /0, the unspecified address (`0.0.0.0`, `::`, which some tools read
 * as "any"), or an IPv6 range holding all of `::ffff:0:0/96` (every IPv4 address, mapped). A zone id
 * (`fe80::1%eth0`) names an interface of the machine that wrote it, not an address a peer has: refused.
 */
export function parseAddressEntry(text: string): AddressEntry {
  const [address = '', bits, ...rest] = text.trim().split('/');
  const quoted = JSON.stringify(text).slice(0, 60);
  if (address.includes('%')) return { error: `${quoted} has a zone id (%...); give the address without it` };
  const family = isIP(address);
  if (!family || rest.length > 0) return { error: `${quoted} is not an IP address or CIDR range` };
  if (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128))) return { error: `${quoted} is not an IP address or CIDR range` };
  const entry = bits === undefined ? address.toLowerCase() : `${address.toLowerCase()}/${Number(bits)}`;
  const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
  const unspecified = new BlockList();
  unspecified.addAddress(family === 4 ? '0.0.0.0' : '::', family === 4 ? 'ipv4' : 'ipv6');
  const everyAddress =
    prefix === 0 ||
    unspecified.check(address, family === 4 ? 'ipv4' : 'ipv6') ||
    (family === 6 && prefix <= 96 && blockList([entry]).check('::ffff:0:0', 'ipv6'));
  return { entry, everyAddress };
}

const lists = new Map<string, BlockList>();

function blockList(entries: readonly string[]): BlockList {
  const cacheKey = entries.join(',');
  let list = lists.get(cacheKey);
  if (!list) {
    list = new BlockList();
    for (const e of entries) {
      const [address = '', bits] = e.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) list.addAddress(address, type);
      else list.addSubnet(address, Number(bits), type);
    }
    // Bounded: the lists come from a few API clients, but a cache must never grow without end.
    if (lists.size > 1000) lists.clear();
    lists.set(cacheKey, list);
  }
  return list;
}

/** True when `address` (as the sign-in guard sees it) is one of the entries; an empty list allows all. */
export function addressAllowed(entries: readonly string[] | null, address: string): boolean {
  if (!entries || entries.length === 0) return true;
  const family = isIP(address);
  if (!family) return false;
  return blockList(entries).check(address, family === 6 ? 'ipv6' : 'ipv4');
}
