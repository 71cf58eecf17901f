/** Webhook network rules (WHM-003, WHN-024, WHN-026). */
import { describe, expect, it } from 'vitest'
import { checkEndpointUrl, isPublicAddress } from './network-rules.js'

describe('network rules', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '2001:db8::1',
    'not-an-ip',
  ])('[WHN-026] refuses the non-public address %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(false)
  })

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    '[WHN-026] accepts the public address %s',
    (ip) => {
      expect(isPublicAddress(ip)).toBe(true)
    },
  )

  it.each([
    ['http://hooks.example.com/x', 'not an HTTPS address'],
    ['ftp://hooks.example.com/x', 'not an HTTPS address'],
    ['hooks.example.com/x', 'not an absolute URL'],
    ['https://user:pw@hooks.example.com/x', 'the address carries login details'],
    ['https://localhost/x', 'localhost name'],
    ['https://LOCALHOST./x', 'localhost name'],
    ['https://api.localhost/x', 'localhost name'],
    ['https://printer.local/x', '.local name'],
    ['https://metadata.google.internal/x', '.internal name'],
    ['https://intranet/x', 'single-label name'],
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
