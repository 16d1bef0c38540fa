import { isIP } from 'node:net';
import type { AddressClass } from '../../ports/outbound-http.js';

/**
 * Which IP addresses outbound HTTP may reach when private networks are not allowed (DESIGN.md
 * section 7). Everything that is not the public internet is refused: a webhook URL is user input,
 * and without this it could read cloud metadata (169.254.169.254), the service's own admin ports
 * or anything else on the host's network. IPv6 forms that embed an IPv4 address (mapped
 * ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by the
 * embedded address.
 */
export type { AddressClass };

type Range = [base: number, bits: number, cls: AddressClass];

const V4_RANGES: Range[] = [
  [v4('0.0.0.0'), 8, 'unspecified'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'cgnat'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link_local'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'reserved'],
  [v4('192.0.2.0'), 24, 'reserved'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'reserved'],
  [v4('198.51.100.0'), 24, 'reserved'],
  [v4('203.0.113.0'), 24, 'reserved'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'],
];

function v4(text: string): number {
  return text.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function classifyV4(n: number): AddressClass {
  for (const [base, bits, cls] of V4_RANGES) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return cls;
  }
  return 'public';
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or null. */
function v6Groups(text: string): number[] | null {
  let t = text.replace(/%.*$/, '');
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (dotted) {
    if (isIP(dotted[1]) !== 4) return null;
    const n = v4(dotted[1]);
    tail.push(Math.floor(n / 65536), n % 65536);
    t = t.slice(0, -dotted[1].length);
    // '::ffff:' loses its separator; '::' (the compatible form) stays a gap.
    if (t.endsWith(':') && !t.endsWith('::')) t = t.slice(0, -1);
  }
  const halves = t.split('::');
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const known = head.length + rest.length + tail.length;
  if (head.concat(rest).some(Number.isNaN)) return null;
  if (halves.length === 1 && known !== 8) return null;
  if (known > 8 || (halves.length === 2 && known === 8)) return null;
  return [...head, ...Array(8 - known).fill(0), ...rest, ...tail];
}

const embeddedV4 = (hi: number, lo: number) => hi * 65536 + lo;

function classifyV6(g: number[]): AddressClass {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (deprecated compatible form).
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return classifyV4(embeddedV4(g[6], g[7]));
  // NAT64 well-known prefix 64:ff9b::/96.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return classifyV4(embeddedV4(g[6], g[7]));
  // 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
  if (g[0] === 0x2002) return classifyV4(embeddedV4(g[1], g[2]));
  if ((g[0] & 0xfe00) === 0xfc00) return 'private';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link_local';
  if ((g[0] & 0xffc0) === 0xfec0) return 'private';
  if ((g[0] & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'reserved';
  if (g[0] === 0x0100 && zeros(1, 4)) return 'reserved';
  return 'public';
}

/** What kind of address `ip` is (IPv4 or IPv6 text, IPv6 without brackets). */
export function classifyAddress(ip: string): AddressClass {
  const version = isIP(ip);
  if (version === 4) return classifyV4(v4(ip));
  if (version === 6) {
    const groups = v6Groups(ip);
    return groups ? classifyV6(groups) : 'invalid';
  }
  return 'invalid';
}

/** True when outbound HTTP must not connect to `ip` unless private networks are allowed. */
export const isRefusedAddress = (ip: string): boolean => classifyAddress(ip) !== 'public';
