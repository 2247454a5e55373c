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

/**
 * This service's own listening ports, which a loopback receiver may not name even in the sandbox (a
 * ping to the payment simulator's pay address credited a top-up): `refused` whole, and `hooksOnly`
 * (the identity simulator) for anything but its `/sandbox/hooks/{name}` receiver. Outside the sandbox
 * loopback is refused anyway.
 *
 * `hostAddresses`: this host's own interface addresses (os.networkInterfaces()). The API and the
 * metrics listen on every interface (HOST=0.0.0.0), so `http://<an interface's address>:<the API's
 * port>/` reaches this service as surely as loopback does: such an address is judged as loopback is,
 * in every mode (allowed in the sandbox except on the ports above, refused outside it).
 */
export type OwnPorts = { refused: readonly number[]; hooksOnly: readonly number[]; hostAddresses?: readonly string[] };

/**
 * The one detail of every refused address: a name that does not resolve, a name or a literal that
 * is not public (or is link-local, a metadata address, loopback outside the sandbox), and this
 * service's own ports. One message, so that registering an endpoint tells nothing about what a name
 * resolves to inside, or whether it exists; the reason stays in `TargetRefused.reason` for the logs.
 */
export const TARGET_REFUSED = "url: not a receiver webhooks may be sent to (its host must resolve only to public addresses; the sandbox also allows loopback, except this service's own ports)";

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

/**
 * The address and its family, an IPv6 address in one spelling (`::0:1` and `::1` alike, as the WHATWG
 * URL parser writes it) and an IPv4-mapped one (`::ffff:10.1.2.3`, `::ffff:a01:203`) as its IPv4
 * address; null when not an address.
 */
function parsed(address: string): { a: string; type: 'ipv4' | 'ipv6' } | null {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (!family) return null;
  if (family === 4) return { a: bare, type: 'ipv4' };
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (dotted) return { a: dotted, type: 'ipv4' };
  let a = bare;
  try {
    a = new URL(`http://[${bare}]/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    // A zone (`fe80::1%eth0`) the URL parser does not take: judged as written.
  }
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return { a: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, type: 'ipv4' };
  }
  return { a, type: 'ipv6' };
}

/**
 * Whether the address is this host itself: loopback, or one of `hostAddresses` (the interfaces'
 * addresses, an IPv6 one possibly with its `%zone`).
 */
function isSelf(address: string, hostAddresses: readonly string[] = []): boolean {
  const p = parsed(address);
  if (!p) return false;
  if (LOOPBACK.check(p.a, p.type)) return true;
  return hostAddresses.some((h) => {
    const q = parsed(h.replace(/%.*$/, ''));
    return q !== null && q.type === p.type && q.a === p.a;
  });
}

/**
 * Why an address may not be reached, or null when it may. IPv4-mapped IPv6 addresses are judged as
 * IPv4; this host's own addresses (`hostAddresses`) as loopback.
 */
export function addressRefusal(address: string, mode: TargetMode, hostAddresses?: readonly string[]): string | null {
  const p = parsed(address);
  if (!p) return 'not an IP address';
  if (NEVER.check(p.a, p.type)) return 'a link-local or cloud metadata address';
  if (isSelf(address, hostAddresses)) return mode.sandbox ? null : 'a loopback address';
  if (NOT_PUBLIC.check(p.a, p.type)) return 'not a public address';
  return null;
}

export class TargetRefused extends Error {
  /** Why, for the service's own logs and tests; never in an answer (the message is the same for every address). */
  readonly reason: string;
  constructor(message: string, reason: string = message) {
    super(message);
    this.name = 'TargetRefused';
    this.reason = reason;
  }
}

// The identity simulator's sandbox receiver (src/simulators/identity-authority/hooks.ts), on its
// WHATWG-normalised path (dot segments already resolved by URL).
const HOOK_PATH = /^\/sandbox\/hooks\/[A-Za-z0-9_-]{1,64}$/;

/** Why a loopback receiver at `u` would be this service itself, or null. */
export function ownPortRefusal(u: URL, own: OwnPorts | undefined): string | null {
  if (!own) return null;
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  if (own.refused.includes(port)) return "one of this service's own ports";
  if (own.hooksOnly.includes(port) && !HOOK_PATH.test(u.pathname)) return "the identity simulator's port outside its /sandbox/hooks/{name} receiver";
  return null;
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

/**
 * Every address the host resolves to, each allowed; throws TargetRefused (TARGET_REFUSED, the reason
 * aside) when not. `target` (the whole URL) with `own`: a loopback address on one of the service's own
 * ports is refused too.
 */
export async function resolveChecked(host: string, mode: TargetMode, resolver: Resolver = systemResolver, target?: { url: URL; own: OwnPorts | undefined }): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  if (isIP(bare)) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await resolver(bare);
    } catch {
      throw new TargetRefused(TARGET_REFUSED, 'the host name does not resolve');
    }
  }
  if (addresses.length === 0) throw new TargetRefused(TARGET_REFUSED, 'the host name does not resolve');
  for (const a of addresses) {
    const why = targetAddressRefusal(a.address, mode, target);
    // The address itself stays out of the reason too: a log line would tell what a name inside resolves to.
    if (why) throw new TargetRefused(TARGET_REFUSED, `the host resolves to ${why}`);
  }
  return addresses;
}

/** addressRefusal, and this service's own ports on an address of this host (loopback or an interface's). */
export function targetAddressRefusal(address: string, mode: TargetMode, target?: { url: URL; own: OwnPorts | undefined }): string | null {
  const hostAddresses = target?.own?.hostAddresses;
  const why = addressRefusal(address, mode, hostAddresses);
  if (why || !target) return why;
  return isSelf(address, hostAddresses) ? ownPortRefusal(target.url, target.own) : null;
}

/** Registration: the URL's rules, then its host's addresses as they resolve now (and, with `own`, not this service). */
export async function checkTarget(text: string, mode: TargetMode, resolver?: Resolver, own?: OwnPorts): Promise<URL> {
  const why = urlRefusal(text, mode);
  if (why) throw new TargetRefused(why);
  const u = new URL(text);
  await resolveChecked(u.hostname, mode, resolver, { url: u, own });
  return u;
}

/**
 * For node:http(s) `lookup`: resolves, refuses unless every address is allowed, and hands the socket
 * the first checked address, so what is connected is what was checked (no second resolution).
 */
export function checkedLookup(mode: TargetMode, resolver?: Resolver, target?: { url: URL; own: OwnPorts | undefined }): LookupFunction {
  return ((host: string, options: { all?: boolean }, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    resolveChecked(host, mode, resolver, target).then(
      (addresses) => {
        const first = addresses[0]!;
        if (options?.all) callback(null, [first]);
        else callback(null, first.address, first.family);
      },
      (err: Error) => callback(err, ''),
    );
  }) as unknown as LookupFunction;
}
