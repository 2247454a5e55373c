import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a webhook may go (issue 32, SSRF). A receiver must be `https` on public addresses only, judged
 * when an endpoint is registered and again on every delivery against the address the socket actually
 * connects to: the lookup below resolves the name, checks every address and hands the connection the
 * checked one, so a name that answers a public address at registration and a private one later (DNS
 * rebinding) is refused at the delivery. In the sandbox (a stack that talks to no real upstream) `http`
 * and loopback are allowed, so that a newcomer can receive on their own machine; link-local and the
 * clouds' metadata addresses are refused in every mode.
 */
export type TargetMode = { sandbox: boolean };

function list(entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const b = new BlockList();
  for (const [a, bits, type] of entries) b.addSubnet(a, bits, type);
  return b;
}

// Refused in every mode: link-local (169.254.0.0/16 holds the metadata service of AWS, GCP and Azure)
// and AWS's IPv6 metadata address.
const NEVER = list([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
  ['fd00:ec2::254', 128, 'ipv6'],
]);

const LOOPBACK = list([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);

// Not public (IANA special-purpose registries): this network, private, shared (CGNAT), benchmarking,
// documentation, multicast, reserved; IPv6 unspecified, unique-local, documentation, multicast, and the
// translation prefixes that could carry a private IPv4 address inside.
const NOT_PUBLIC = list([
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  // The unspecified address and the deprecated IPv4-compatible block (::a.b.c.d), and SIIT's
  // IPv4-translated block (::ffff:0:a.b.c.d): both could carry a private IPv4 address inside.
  ['::', 96, 'ipv6'],
  ['::ffff:0:0:0', 96, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['2001::', 32, 'ipv6'],
]);

/** Why an address may not be reached, or null when it may. IPv4-mapped IPv6 addresses are judged as IPv4. */
export function addressRefusal(address: string, mode: TargetMode): string | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (!family) return 'not an IP address';
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1] : undefined;
  const [a, type] = mapped ? [mapped, 'ipv4' as const] : [bare, family === 6 ? ('ipv6' as const) : ('ipv4' as const)];
  if (NEVER.check(a, type)) return 'a link-local or cloud metadata address';
  if (LOOPBACK.check(a, type)) return mode.sandbox ? null : 'a loopback address';
  if (NOT_PUBLIC.check(a, type)) return 'not a public address';
  return null;
}

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** The URL's own rules (scheme, no credentials); the addresses are judged by `resolveChecked`. */
export function urlRefusal(text: string, mode: TargetMode): string | null {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return 'url is not a valid URL';
  }
  if (u.protocol !== 'https:' && !(mode.sandbox && u.protocol === 'http:')) return mode.sandbox ? 'url must be https (or http in the sandbox)' : 'url must be https';
  if (u.username || u.password) return 'url must not carry credentials';
  if (!u.hostname) return 'url has no host';
  return null;
}

type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Every address the host resolves to, each allowed; throws TargetRefused naming why not. */
export async function resolveChecked(host: string, mode: TargetMode, resolver: Resolver = systemResolver): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  if (isIP(bare)) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await resolver(bare);
    } catch {
      throw new TargetRefused('url: the host name does not resolve');
    }
  }
  if (addresses.length === 0) throw new TargetRefused('url: the host name does not resolve');
  for (const a of addresses) {
    const why = addressRefusal(a.address, mode);
    // The address itself stays out of the message: it would tell a prober what a name inside resolves to.
    if (why) throw new TargetRefused(`url: the host resolves to ${why}`);
  }
  return addresses;
}

/** Registration: the URL's rules, then its host's addresses as they resolve now. */
export async function checkTarget(text: string, mode: TargetMode, resolver?: Resolver): Promise<URL> {
  const why = urlRefusal(text, mode);
  if (why) throw new TargetRefused(why);
  const u = new URL(text);
  await resolveChecked(u.hostname, mode, resolver);
  return u;
}

/**
 * For node:http(s) `lookup`: resolves, refuses unless every address is allowed, and hands the socket
 * the first checked address, so what is connected is what was checked (no second resolution).
 */
export function checkedLookup(mode: TargetMode, resolver?: Resolver): LookupFunction {
  return ((host: string, options: { all?: boolean }, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    resolveChecked(host, mode, resolver).then(
      (addresses) => {
        const first = addresses[0]!;
        if (options?.all) callback(null, [first]);
        else callback(null, first.address, first.family);
      },
      (err: Error) => callback(err, ''),
    );
  }) as unknown as LookupFunction;
}
