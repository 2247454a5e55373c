import { BlockList, isIP } from 'node:net';

/**
 * Addresses and CIDR ranges (IPv4 and IPv6) an API client may be used from. Node's BlockList does
 * the matching, IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) included, so no library is needed.
 */
export function parseAddressEntry(entry: string): string | null {
  const [address = '', bits, ...rest] = entry.trim().split('/');
  const family = isIP(address);
  if (!family || rest.length > 0) return null;
  if (bits === undefined) return address.toLowerCase();
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return null;
  return `${address.toLowerCase()}/${Number(bits)}`;
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
