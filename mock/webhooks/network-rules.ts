/**
 * Webhook network rules (Webhook notifications 10; WHM-003, WHN-024, WHN-026): HTTPS only, and every address
 * must be public: loopback, private, shared, link-local (the 169.254.169.254 metadata address included),
 * multicast, documentation and reserved ranges, their IPv6 equivalents (IPv4-mapped and NAT64 forms included),
 * and the names localhost, *.localhost, *.local, *.internal and single-label names are refused.
 * --allow-insecure-webhooks lifts the scheme and address rules (http:// and loopback for local rehearsal).
 */
import { BlockList, isIP } from 'node:net'

const NON_PUBLIC_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
]

const NON_PUBLIC_V6: [string, number][] = [
  ['::', 96], // unspecified, loopback ::1, deprecated IPv4-compatible
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (fd00:ec2::254 metadata included)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
]

const blocked = new BlockList()
for (const [net, prefix] of NON_PUBLIC_V4) blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of NON_PUBLIC_V6) blocked.addSubnet(net, prefix, 'ipv6')

/** The eight 16-bit groups of an IPv6 literal (a trailing dotted IPv4 part becomes the last two). */
function groupsV6(ip: string): number[] | undefined {
  let text = ip.toLowerCase().replace(/%.*$/, '')
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text)
  if (dotted) {
    const b = dotted[2]!.split('.').map(Number)
    text = `${dotted[1]}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const part = (h: string) => (h === '' ? [] : h.split(':').map((g) => parseInt(g, 16)))
  const head = part(halves[0]!)
  const tail = halves.length === 2 ? part(halves[1]!) : []
  const fill = 8 - head.length - tail.length
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return undefined
  const groups = [...head, ...Array<number>(fill).fill(0), ...tail]
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96). */
function embeddedV4(ip: string): string | undefined {
  const g = groupsV6(ip)
  if (!g) return undefined
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)
  if (!mapped && !nat64) return undefined
  return `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`
}

/** True when an IP address (v4 or v6 literal) is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip)
  if (family === 4) return !blocked.check(ip, 'ipv4')
  if (family === 6) {
    const v4 = embeddedV4(ip)
    if (v4 !== undefined) return isIP(v4) === 4 && !blocked.check(v4, 'ipv4')
    return !blocked.check(ip, 'ipv6')
  }
  return false
}

/** The host of a URL without IPv6 brackets and without a trailing dot, lowercased. */
export function bareHost(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase()
}

/** Why a host name (not an IP literal) is refused before any DNS lookup, if it is. */
export function refusedHostName(host: string): string | undefined {
  if (host === 'localhost' || host.endsWith('.localhost')) return 'localhost name'
  if (host.endsWith('.local')) return '.local name'
  if (host.endsWith('.internal')) return '.internal name'
  if (!host.includes('.')) return 'single-label name'
  return undefined
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; problem: string }

/**
 * The registration-time check of an endpoint address (the same rules apply again to every resolved address at
 * each attempt): an absolute https URL (http too when insecure), no login details, and unless insecure, no
 * refused name and no non-public IP literal.
 */
export function checkEndpointUrl(text: string, allowInsecure: boolean): UrlCheck {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { ok: false, problem: 'not an absolute URL' }
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) {
    return { ok: false, problem: allowInsecure ? 'not an HTTP(S) address' : 'not an HTTPS address' }
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, problem: 'the address carries login details' }
  }
  const host = bareHost(url)
  if (host === '') return { ok: false, problem: 'no host' }
  if (allowInsecure) return { ok: true, url }
  if (isIP(host) !== 0) {
    return isPublicAddress(host) ? { ok: true, url } : { ok: false, problem: 'non-public address' }
  }
  const refused = refusedHostName(host)
  return refused ? { ok: false, problem: refused } : { ok: true, url }
}
