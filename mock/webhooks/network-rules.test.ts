/**
 * Webhook network rules (WHM-003, WHN-024, WHN-026): one row per class of address or name, with the addresses
 * it refuses and, where the class has them, near-misses that stay allowed. Every refused address is refused
 * both as a resolved address (isPublicAddress) and as the host of an endpoint URL at registration.
 */
import { describe, expect, it } from 'vitest'
import { checkEndpointUrl, isPublicAddress } from './network-rules.js'

const NOT_AN_ADDRESS = 'not an IP address (resolver answers are canonical literals)'

type AddressRow = { class: string; refused: string[]; allowed: string[] }

/** IP address classes: a literal in a URL and a resolved DNS answer are judged alike. */
const ADDRESS_CLASSES: AddressRow[] = [
  { class: 'IPv4 public unicast', refused: [], allowed: ['8.8.8.8', '93.184.216.34', '1.0.0.1'] },
  { class: 'IPv4 "this network" 0.0.0.0/8', refused: ['0.0.0.0', '0.1.2.3'], allowed: [] },
  {
    class: 'IPv4 private (10/8, 172.16/12, 192.168/16)',
    refused: ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1'],
    allowed: ['11.0.0.1', '172.32.0.1', '172.15.255.255', '192.169.0.1'],
  },
  { class: 'IPv4 loopback 127/8', refused: ['127.0.0.1', '127.255.0.9'], allowed: ['128.0.0.1'] },
  {
    class: 'IPv4 link-local 169.254/16 (metadata 169.254.169.254)',
    refused: ['169.254.169.254', '169.254.0.1'],
    allowed: ['169.255.0.1'],
  },
  {
    class: 'IPv4 shared address space (carrier-grade NAT) 100.64/10',
    refused: ['100.64.0.1', '100.100.100.200', '100.127.255.254'],
    allowed: ['100.63.255.255', '100.128.0.1'],
  },
  {
    class: 'IPv4 multicast 224/4',
    refused: ['224.0.0.1', '239.255.255.250'],
    allowed: ['223.5.5.5'],
  },
  {
    class: 'IPv4 broadcast and reserved 240/4',
    refused: ['255.255.255.255', '240.0.0.1'],
    allowed: [],
  },
  {
    class: 'IPv4 IETF, documentation, benchmarking, 6to4 relay',
    refused: ['192.0.0.8', '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '192.88.99.1'],
    allowed: ['198.20.0.1', '203.0.114.1'],
  },
  { class: 'IPv4 AS112 and AMT anycast', refused: ['192.175.48.1', '192.52.193.1'], allowed: [] },
  {
    class: 'IPv6 public unicast (2000::/3)',
    refused: [],
    allowed: ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::1'],
  },
  {
    class: 'IPv6 unspecified and loopback',
    refused: ['::', '::1', '0:0:0:0:0:0:0:1'],
    allowed: [],
  },
  {
    class: 'IPv6 outside global unicast (IPv4-compatible ::/96, unassigned)',
    refused: ['::127.0.0.1', '::8.8.8.8', '::2', '1::1', '4000::1'],
    allowed: [],
  },
  { class: 'IPv6 link-local fe80::/10', refused: ['fe80::1', 'febf::1'], allowed: [] },
  { class: 'IPv6 site-local fec0::/10', refused: ['fec0::1'], allowed: [] },
  {
    class: 'IPv6 unique local fc00::/7 (metadata fd00:ec2::254)',
    refused: ['fc00::1', 'fd00:ec2::254', 'fdff::1'],
    allowed: [],
  },
  { class: 'IPv6 multicast ff00::/8', refused: ['ff02::1', 'ff05::2'], allowed: [] },
  {
    class: 'IPv4-mapped ::ffff:0:0/96 (the embedded IPv4 address decides)',
    refused: [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:a9fe:a9fe',
      '::ffff:10.0.0.1',
      '::ffff:0.0.0.0',
      '::ffff:100.64.0.1',
    ],
    allowed: ['::ffff:8.8.8.8', '::ffff:808:808'],
  },
  {
    class: 'IPv4-translated ::ffff:0:0:0/96',
    refused: ['::ffff:0:127.0.0.1', '::ffff:0:8.8.8.8'],
    allowed: [],
  },
  {
    class: 'NAT64 well-known prefix 64:ff9b::/96 (the embedded IPv4 address decides)',
    refused: ['64:ff9b::10.0.0.1', '64:ff9b::7f00:1', '64:ff9b::169.254.169.254'],
    allowed: ['64:ff9b::8.8.8.8'],
  },
  {
    class: 'NAT64 local-use 64:ff9b:1::/48',
    refused: ['64:ff9b:1::8.8.8.8', '64:ff9b:1:7f00:1::', '64:ff9b:1::1'],
    allowed: [],
  },
  {
    class: '6to4 2002::/16 (the embedded IPv4 address decides)',
    refused: ['2002:7f00:1::1', '2002:a9fe:a9fe::', '2002:a00:1::1', '2002:c0a8:101::5', '2002::1'],
    allowed: ['2002:808:808::1'],
  },
  {
    class: 'Teredo 2001::/32',
    refused: ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1'],
    allowed: [],
  },
  {
    class: 'IPv6 documentation, benchmarking, ORCHID, discard, AMT, AS112, segment routing',
    refused: [
      '2001:db8::1',
      '3fff::1',
      '2001:2::1',
      '2001:10::1',
      '2001:20::1',
      '100::1',
      '2001:3::1',
      '2001:4:112::1',
      '2620:4f:8000::1',
      '5f00::1',
    ],
    allowed: ['2001:200::1'],
  },
  { class: NOT_AN_ADDRESS, refused: ['not-an-ip', '', '127.1', '0x7f.0.0.1'], allowed: [] },
]

type NameRow = { class: string; refused: [string, string][]; allowed: string[] }

/** Host names (before any DNS lookup): normalised once (case, every trailing dot, IDNA). */
const NAME_CLASSES: NameRow[] = [
  {
    class: 'localhost',
    refused: [
      ['localhost', 'localhost name'],
      ['LOCALHOST.', 'localhost name'],
      ['localhost..', 'localhost name'],
      ['LocalHost...', 'localhost name'],
      ['ｌｏｃａｌｈｏｓｔ', 'localhost name'],
    ],
    allowed: ['localhost.example.com', 'mylocalhost.com'],
  },
  {
    class: '*.localhost',
    refused: [
      ['api.localhost', 'localhost name'],
      ['a.b.LOCALHOST..', 'localhost name'],
    ],
    allowed: ['localhost-api.example.com'],
  },
  {
    class: '.local',
    refused: [
      ['printer.local', '.local name'],
      ['PRINTER.LOCAL..', '.local name'],
    ],
    allowed: ['local.example.com', 'printer.locale.example'],
  },
  {
    class: '.internal',
    refused: [
      ['intranet.corp.internal', '.internal name'],
      ['x.internal..', '.internal name'],
    ],
    allowed: ['internal.example.com'],
  },
  {
    class: 'metadata names',
    refused: [
      ['metadata', 'metadata name'],
      ['metadata.', 'metadata name'],
      ['metadata.google.internal', 'metadata name'],
      ['METADATA.GOOGLE.INTERNAL..', 'metadata name'],
      ['instance-data', 'metadata name'],
      ['instance-data.ec2.internal', 'metadata name'],
    ],
    allowed: ['metadata.example.com'],
  },
  {
    class: 'home network names (home.arpa)',
    refused: [
      ['router.home.arpa', 'home network name'],
      ['HOME.ARPA..', 'home network name'],
    ],
    allowed: ['home.arpa.example.com'],
  },
  {
    class: 'single-label names',
    refused: [
      ['intranet', 'single-label name'],
      ['intranet..', 'single-label name'],
    ],
    allowed: [],
  },
  {
    class: 'names that are IP addresses once normalised',
    refused: [
      ['127.0.0.1..', 'non-public address'],
      ['0x7f.0.0.1..', 'non-public address'],
      ['2130706433..', 'non-public address'],
      ['169.254.169.254.', 'non-public address'],
    ],
    allowed: ['8.8.8.8..'],
  },
  {
    class: 'public names (look-alikes of internal addresses included)',
    refused: [],
    allowed: [
      'hooks.example.com',
      'HOOKS.EXAMPLE.COM.',
      'fcc.gov',
      'fdic.gov',
      'fd.io',
      'fe80.example.com',
      '10.example.com',
      '127.0.0.1.example.com',
      'faß.de',
    ],
  },
]

const urlOf = (host: string) => `https://${host.includes(':') ? `[${host}]` : host}/hook`

describe('network rules', () => {
  describe.each(ADDRESS_CLASSES)('[WHN-026] address class: $class', (row) => {
    it.each(row.refused.map((ip) => [ip]))('refuses %s as a resolved address', (ip) => {
      expect(isPublicAddress(ip)).toBe(false)
    })
    if (row.class !== NOT_AN_ADDRESS) {
      it.each(row.refused.map((ip) => [ip]))('refuses %s as an endpoint host', (ip) => {
        expect(checkEndpointUrl(urlOf(ip), false)).toEqual({
          ok: false,
          problem: 'non-public address',
        })
      })
    }
    if (row.allowed.length > 0) {
      it.each(row.allowed.map((ip) => [ip]))('allows %s, also as an endpoint host', (ip) => {
        expect(isPublicAddress(ip)).toBe(true)
        expect(checkEndpointUrl(urlOf(ip), false).ok).toBe(true)
      })
    }
  })

  describe.each(NAME_CLASSES)('[WHN-026] name class: $class', (row) => {
    if (row.refused.length > 0) {
      it.each(row.refused)('refuses https://%s/ at registration (%s)', (host, problem) => {
        expect(checkEndpointUrl(urlOf(host), false)).toEqual({ ok: false, problem })
      })
    }
    if (row.allowed.length > 0) {
      it.each(row.allowed.map((h) => [h]))('allows https://%s/', (host) => {
        expect(checkEndpointUrl(urlOf(host), false).ok).toBe(true)
      })
    }
  })

  it.each([
    ['http://hooks.example.com/x', 'not an HTTPS address'],
    ['ftp://hooks.example.com/x', 'not an HTTPS address'],
    ['hooks.example.com/x', 'not an absolute URL'],
    ['https://user:pw@hooks.example.com/x', 'the address carries login details'],
    ['https://./x', 'no host'],
    ['https://../x', 'no host'],
    ['https://127.0.0.1/x', 'non-public address'],
    ['https://2130706433/x', 'non-public address'],
    ['https://[::1]/x', 'non-public address'],
    ['https://[::ffff:169.254.169.254]/x', 'non-public address'],
    ['https://169.254.169.254/latest/meta-data', 'non-public address'],
  ])('[WHM-003][WHN-026] refuses %s at registration', (url, problem) => {
    expect(checkEndpointUrl(url, false)).toEqual({ ok: false, problem })
  })

  it('[WHM-003] accepts a public HTTPS address', () => {
    expect(checkEndpointUrl('https://hooks.example.com/ai', false).ok).toBe(true)
    expect(checkEndpointUrl('https://93.184.216.34:8443/ai', false).ok).toBe(true)
  })

  it('allows http:// and loopback only with --allow-insecure-webhooks, never login details', () => {
    expect(checkEndpointUrl('http://127.0.0.1:9999/x', true).ok).toBe(true)
    expect(checkEndpointUrl('http://localhost:9999/x', true).ok).toBe(true)
    expect(checkEndpointUrl('ftp://127.0.0.1/x', true).ok).toBe(false)
    expect(checkEndpointUrl('http://u:p@127.0.0.1/x', true).ok).toBe(false)
  })
})
