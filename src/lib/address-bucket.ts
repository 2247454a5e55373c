import { isIPv4, isIPv6 } from 'node:net';

/**
 * What a per-address limit counts a client address as: an IPv4 address as itself; an IPv6 address as
 * its /64 network, because one subscriber (a phone on a mobile network, a home router) is handed a
 * whole /64 and can speak from any of its 2^64 addresses; an IPv4-mapped IPv6 address
 * (`::ffff:198.51.100.7`, also written `::ffff:c633:6407`) as the IPv4 address it carries. Anything
 * else (`unknown`) is counted as it is.
 */
export function addressBucket(address: string): string {
  const a = address.trim().toLowerCase().replace(/%.*$/, '');
  if (isIPv4(a)) return a;
  if (!isIPv6(a)) return address;
  const g = ipv6Groups(a);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join('.');
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (a dotted IPv4 tail becomes the last two). */
function ipv6Groups(a: string): number[] {
  let text = a;
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
