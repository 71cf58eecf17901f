/**
 * Public addresses and names: the one classification shared by the webhook network rules (Webhook
 * notifications 10; WHM-003, WHN-026: "internal networks, loopback, link-local, metadata addresses, localhost,
 * .local and .internal names are refused"; every address must be public) and the URL result rule (Errors >
 * OUTPUT_URL_INVALID, ERR-103). Pure: no DNS, no I/O; resolving a name and checking each answer is the
 * caller's part (mock/webhooks/sender.ts, mock/routes/webhooks.ts).
 *
 * Addresses are classified by ipaddr.js's special-purpose ranges (`range()`): only `unicast` is public, and an
 * IPv6 address must also lie in global unicast 2000::/3. Forms that carry an IPv4 address (IPv4-mapped
 * ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address. NAT64 local use
 * (64:ff9b:1::/48), IPv4-translated (::ffff:0:0:0/96), Teredo and the other special ranges are refused.
 *
 * Names are normalised once (the URL host parser's IDNA mapping and lowercasing, every trailing dot removed, an
 * IPv4 address in any spelling the parser knows written as a dotted quad), then localhost, *.localhost,
 * *.local, *.internal, *.home.arpa, cloud metadata names and single-label names are refused.
 */
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96')
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3')

/** The IPv4 address a translation form carries, if the IPv6 address is one: it decides the verdict. */
function embeddedV4(v6: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const p = v6.parts
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff])
  if (range === 'ipv4Mapped') return v4(p[6]!, p[7]!) // ::ffff:a.b.c.d
  if (range === '6to4') return v4(p[1]!, p[2]!) // 2002:aabb:ccdd::/48
  if (range === 'rfc6052' && v6.match(NAT64_WELL_KNOWN)) return v4(p[6]!, p[7]!) // 64:ff9b::a.b.c.d
  return undefined // NAT64 local use 64:ff9b:1::/48 has no fixed place for the IPv4 address
}

/** An IPv6 literal (isIP 6) as the URL parser writes it; '' when it has a zone index or is otherwise refused. */
function canonicalV6(ip: string): string {
  try {
    return new URL(`https://[${ip}]/`).hostname.slice(1, -1)
  } catch {
    return ''
  }
}

/**
 * The class of an IP address literal and whether it is public: an ipaddr.js range name ('unicast', 'private',
 * 'loopback', 'linkLocal', 'uniqueLocal', 'carrierGradeNat', 'reserved', 'rfc6052', '6to4', 'teredo', ...),
 * 'ipv4Mapped:loopback' and the like for a form judged by its IPv4 address, 'notGlobalUnicast' for an IPv6
 * address outside 2000::/3, 'invalid' for anything that is not a plain address literal.
 */
export function addressClass(ip: string): { class: string; public: boolean } {
  const family = isIP(ip)
  // IPv6 goes through the URL parser's serializer first: ipaddr.js reads the deprecated IPv4-compatible form
  // '::a.b.c.d' as the IPv4-mapped '::ffff:a.b.c.d', the URL parser as '::aabb:ccdd'.
  const literal = family === 6 ? canonicalV6(ip) : ip
  if (family === 0 || literal === '') return { class: 'invalid', public: false }
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  try {
    addr = ipaddr.parse(literal)
  } catch {
    return { class: 'invalid', public: false }
  }
  if (addr.kind() === 'ipv4') {
    const range = addr.range()
    return { class: range, public: range === 'unicast' }
  }
  const v6 = addr as ipaddr.IPv6
  const range = v6.range()
  const v4 = embeddedV4(v6, range)
  if (v4) {
    const inner = addressClass(v4.toString())
    return { class: `${range}:${inner.class}`, public: inner.public }
  }
  if (range !== 'unicast') return { class: range, public: false }
  if (!v6.match(GLOBAL_UNICAST)) return { class: 'notGlobalUnicast', public: false }
  return { class: 'unicast', public: true }
}

/** True when an IP address literal (v4 or v6, as a resolver returns it) is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  return addressClass(ip).public
}

/** The host part of an https URL as the URL parser writes it (IDNA, lowercase, IPv4 forms), '' if invalid. */
function parsedHost(name: string): string {
  if (name === '' || /[\s/\\?#@:[\]]/.test(name)) return ''
  try {
    return new URL(`https://${name}/`).hostname
  } catch {
    return ''
  }
}

/**
 * A host as the rules see it: IPv6 brackets removed; a name mapped and lowercased as the URL parser does
 * (IDNA), every trailing dot removed, and a name that is then an IPv4 address in any spelling ('0x7f.0.0.1',
 * '2130706433') written as a dotted quad. '' when there is no valid host.
 */
export function normaliseHost(raw: string): string {
  const inner = /^\[(.*)\]$/.exec(raw)?.[1] ?? raw
  if (isIP(inner) === 6) return inner.toLowerCase()
  // Two rounds: the parser may turn full-width dots into trailing dots, and a name without its trailing dots
  // may be an IPv4 address ('127.0.0.1..').
  let host = inner
  for (let round = 0; round < 2; round++)
    host = parsedHost(host.replace(/\.+$/, '')).replace(/\.+$/, '')
  return host
}

/** The normalised host of a URL (see normaliseHost). */
export function bareHost(url: URL): string {
  return normaliseHost(url.hostname)
}

/** Cloud metadata service names (their addresses are refused as link-local or unique local anyway). */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'instance-data',
  'instance-data.ec2.internal',
])

/** Why a normalised host name (not an IP literal) is refused before any DNS lookup, if it is. */
export function refusedHostName(host: string): string | undefined {
  const under = (suffix: string) => host === suffix || host.endsWith(`.${suffix}`)
  if (METADATA_NAMES.has(host)) return 'metadata name'
  if (under('localhost')) return 'localhost name'
  if (host.endsWith('.local')) return '.local name'
  if (host.endsWith('.internal')) return '.internal name'
  if (under('home.arpa')) return 'home network name'
  if (!host.includes('.')) return 'single-label name'
  return undefined
}

/**
 * Why a normalised host (bareHost) is not public, if it is not: no host, a non-public address literal, or a
 * refused name. A name that passes still has to resolve to public addresses only where it is used (webhooks).
 */
export function hostProblem(host: string): string | undefined {
  if (host === '') return 'no host'
  if (isIP(host) !== 0) return isPublicAddress(host) ? undefined : 'non-public address'
  return refusedHostName(host)
}
