/**
 * The shared address classification (WHN-026, ERR-103): the class each address is judged by, translation forms
 * judged by the IPv4 address they carry, and host normalisation. The full table of classes with allowed and
 * refused examples is in mock/webhooks/network-rules.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { addressClass, hostProblem, normaliseHost } from './addresses.js'

describe('addresses', () => {
  it.each([
    ['8.8.8.8', 'unicast', true],
    ['10.0.0.1', 'private', false],
    ['100.64.0.1', 'carrierGradeNat', false],
    ['169.254.169.254', 'linkLocal', false],
    ['::1', 'loopback', false],
    ['::', 'unspecified', false],
    ['fd00:ec2::254', 'uniqueLocal', false],
    ['::ffff:127.0.0.1', 'ipv4Mapped:loopback', false],
    ['::ffff:8.8.8.8', 'ipv4Mapped:unicast', true],
    ['64:ff9b::a9fe:a9fe', 'rfc6052:linkLocal', false],
    ['64:ff9b::8.8.8.8', 'rfc6052:unicast', true],
    ['64:ff9b:1::8.8.8.8', 'rfc6052', false],
    ['2002:7f00:1::1', '6to4:loopback', false],
    ['2002:808:808::1', '6to4:unicast', true],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo', false],
    ['::ffff:0:8.8.8.8', 'rfc6145', false],
    ['::8.8.8.8', 'notGlobalUnicast', false],
    ['2606:4700:4700::1111', 'unicast', true],
    ['fe80::1%eth0', 'invalid', false],
    ['0x7f.0.0.1', 'invalid', false],
  ] as const)('[WHN-026][ERR-103] %s is %s (public: %s)', (ip, cls, pub) => {
    expect(addressClass(ip)).toEqual({ class: cls, public: pub })
  })

  it.each([
    ['LOCALHOST...', 'localhost'],
    ['[::1]', '::1'],
    ['ｌｏｃａｌｈｏｓｔ．', 'localhost'],
    ['faß.de.', 'xn--fa-hia.de'],
    ['0x7f.0.0.1..', '127.0.0.1'],
    ['2130706433.', '127.0.0.1'],
    ['10.example.com', '10.example.com'],
    ['..', ''],
    ['evil.com@localhost', ''],
    ['a b', ''],
  ])('[WHN-026][ERR-103] normalises the host %s to "%s"', (raw, host) => {
    expect(normaliseHost(raw)).toBe(host)
  })

  it('[WHN-026][ERR-103] judges a normalised host: no host, address literal or name', () => {
    expect(hostProblem('')).toBe('no host')
    expect(hostProblem('127.0.0.1')).toBe('non-public address')
    expect(hostProblem('::ffff:7f00:1')).toBe('non-public address')
    expect(hostProblem('metadata.google.internal')).toBe('metadata name')
    expect(hostProblem('fcc.gov')).toBeUndefined()
    expect(hostProblem('8.8.8.8')).toBeUndefined()
  })
})
