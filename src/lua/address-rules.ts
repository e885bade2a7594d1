/**
 * Which IP addresses `panto.fetch` may connect to: public unicast only, unless the host allows more. The ranges are
 * those of shared/reference/scriptable-host.md ("Refuse list": loopback, private, link-local, carrier-grade NAT,
 * documentation, benchmarking, multicast, reserved, the unspecified address, and the IPv6 blocks that embed an IPv4
 * address: mapped, NAT64, 6to4, Teredo), so `169.254.169.254`, `fd00:ec2::254` and `100.100.100.200` (cloud metadata)
 * are refused too. IPv6 outside 2000::/3 (global unicast) is refused as a whole.
 */

import net from 'node:net';

/** An address range: family, first address and prefix length. */
interface Range {
  v6: boolean;
  base: bigint;
  bits: number;
}

const REFUSED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const REFUSED_V6 = [
  '::/128',
  '::1/128',
  '::ffff:0:0/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

const REFUSED = [...REFUSED_V4, ...REFUSED_V6].map((r) => parseRange(r) as Range);
const GLOBAL_UNICAST_V6 = parseRange('2000::/3') as Range;

/** `ip` as a number (IPv4: 32 bits, IPv6: 128), or null when it is not an IP address. */
export function parseAddress(ip: string): { v6: boolean; value: bigint } | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const zoneless = bare.split('%')[0] as string;
  const kind = net.isIP(zoneless);
  if (kind === 4) {
    let value = 0n;
    for (const part of zoneless.split('.')) value = (value << 8n) | BigInt(Number(part));
    return { v6: false, value };
  }
  if (kind !== 6) return null;
  let text = zoneless.toLowerCase();
  // An IPv4 tail (::ffff:1.2.3.4) as two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const parsed = parseAddress(v4[1] as string);
    if (parsed === null) return null;
    const n = Number(parsed.value);
    text = `${text.slice(0, v4.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [left, right] = text.includes('::') ? (text.split('::') as [string, string]) : [text, null];
  const head = left === '' ? [] : left.split(':');
  const tail = right === null || right === '' ? [] : right.split(':');
  const groups =
    right === null ? head : [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail];
  if (groups.length !== 8) return null;
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(Number.parseInt(g, 16));
  return { v6: true, value };
}

/** A CIDR (`10.0.0.0/8`, `fd00::/8`, or one address), or null when malformed. */
export function parseRange(cidr: string): Range | null {
  const [addr, bitsText] = cidr.split('/') as [string, string | undefined];
  const a = parseAddress(addr.trim());
  if (a === null) return null;
  const max = a.v6 ? 128 : 32;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return null;
  return { v6: a.v6, base: a.value, bits };
}

function inRange(a: { v6: boolean; value: bigint }, r: Range): boolean {
  if (a.v6 !== r.v6) return false;
  const shift = BigInt((r.v6 ? 128 : 32) - r.bits);
  return a.value >> shift === r.base >> shift;
}

/** True when `ip` is a public unicast address (what fetch reaches by default). Not an IP address: false. */
export function isPublicAddress(ip: string): boolean {
  const a = parseAddress(ip);
  if (a === null) return false;
  if (a.v6 && !inRange(a, GLOBAL_UNICAST_V6)) return false;
  return !REFUSED.some((r) => inRange(a, r));
}

/** Compiled host rules of fetch. */
export class AddressRules {
  readonly #allowHosts: RegExp[] | null;
  readonly #privateHosts: RegExp[];
  readonly #privateRanges: Range[];

  /** Throws `Error` naming a malformed range. */
  constructor(opts: {
    allowHosts?: readonly string[] | undefined;
    privateHosts?: readonly string[] | undefined;
    privateRanges?: readonly string[] | undefined;
  }) {
    this.#allowHosts = opts.allowHosts === undefined ? null : opts.allowHosts.map(hostPattern);
    this.#privateHosts = (opts.privateHosts ?? []).map(hostPattern);
    this.#privateRanges = (opts.privateRanges ?? []).map((r) => {
      const range = parseRange(r);
      if (range === null) throw new Error(`'${r}' is not an IP address or CIDR range`);
      return range;
    });
  }

  /** Why `host` may not be fetched at all (not on `allowHosts`), or null. */
  hostProblem(host: string): string | null {
    if (this.#allowHosts === null) return null;
    const h = normalHost(host);
    return this.#allowHosts.some((re) => re.test(h))
      ? null
      : `${host} is not on the host's list of allowed hosts`;
  }

  /** Why `host` may not connect to `ip`, or null. */
  addressProblem(host: string, ip: string): string | null {
    if (isPublicAddress(ip)) return null;
    const h = normalHost(host);
    if (this.#privateHosts.some((re) => re.test(h))) return null;
    const a = parseAddress(ip);
    if (a !== null && this.#privateRanges.some((r) => inRange(a, r))) return null;
    return `${host} resolves to ${ip}, a loopback, private, link-local or reserved address (refused; the host can allow it)`;
  }
}

function normalHost(host: string): string {
  return (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host)
    .toLowerCase()
    .replace(/\.$/, '');
}

/** `example.com` (exactly) or `*.example.com` (any subdomain) as a matcher. */
function hostPattern(p: string): RegExp {
  const h = normalHost(p.trim());
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (h.startsWith('*.')) return new RegExp(`^(?:[^.]+\\.)+${esc(h.slice(2))}$`);
  return new RegExp(`^${esc(h)}$`);
}
