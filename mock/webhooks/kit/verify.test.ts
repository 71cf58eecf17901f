/**
 * Properties of the receiver kit's verifySignature (Webhook notifications 2-5), checked against a second,
 * deliberately different implementation of the scheme written here from the document: Web Crypto
 * (crypto.subtle) HMAC, a split-based header parser and a plain string comparison.
 */
import { webcrypto } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseSignatureHeader, verifySignature } from './verify.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

// ---- the independent implementation (Web Crypto, no node:crypto HMAC, no regular expression) ----

async function subtleHex(secret: string, tText: string, body: Uint8Array): Promise<string> {
  const key = await webcrypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const prefix = new TextEncoder().encode(`${tText}.`)
  const message = new Uint8Array(prefix.length + body.length)
  message.set(prefix, 0)
  message.set(body, prefix.length)
  const mac = new Uint8Array(await webcrypto.subtle.sign('HMAC', key, message))
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')
}

const DIGITS = '0123456789'
const HEX = '0123456789abcdef'

/** The document's rules 2-5, spelled out without a regular expression. */
async function referenceVerify(
  header: string,
  body: Uint8Array,
  secrets: string[],
  nowS: number,
): Promise<boolean> {
  const parts = header.split(',')
  if (parts.length !== 2) return false
  const [tPart, vPart] = parts as [string, string]
  if (!tPart.startsWith('t=') || !vPart.startsWith('v1=')) return false
  const tText = tPart.slice(2)
  const v1 = vPart.slice(3)
  if (tText.length < 1 || tText.length > 12 || [...tText].some((ch) => !DIGITS.includes(ch)))
    return false
  if (v1.length !== 64 || [...v1].some((ch) => !HEX.includes(ch))) return false
  if (Math.abs(nowS - Number(tText)) > 300) return false
  for (const secret of secrets) {
    if (secret.length > 0 && (await subtleHex(secret, tText, body)) === v1) return true
  }
  return false
}

const signWithReference = async (secret: string, t: number, body: Uint8Array) =>
  `t=${t},v1=${await subtleHex(secret, String(t), body)}`

// ---- arbitraries ----

const body = fc.uint8Array({ minLength: 0, maxLength: 4096 })
const secret = fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme' })
const timestamp = fc.integer({ min: 0, max: 999_999_999_999 })
const skew = fc.integer({ min: -300, max: 300 })

describe('verifySignature', () => {
  it('[WHN-009][WHN-010] accepts exactly what was signed, with any secret and body', async () => {
    await fc.assert(
      fc.asyncProperty(body, secret, timestamp, skew, async (b, s, t, d) => {
        const header = await signWithReference(s, t, b)
        expect(verifySignature({ header, rawBody: b, secrets: [s], nowS: t + d })).toEqual({
          ok: true,
          t,
        })
      }),
      params,
    )
  })

  it('[WHN-009][WHN-010] rejects a change of any body byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 4096 }),
        secret,
        timestamp,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (b, s, t, at, flip) => {
          const header = await signWithReference(s, t, b)
          const changed = Uint8Array.from(b)
          const i = at % changed.length
          changed[i] = changed[i]! ^ flip
          expect(verifySignature({ header, rawBody: changed, secrets: [s], nowS: t })).toEqual({
            ok: false,
            reason: 'signature-mismatch',
          })
        },
      ),
      params,
    )
  })

  it('[WHN-009][WHN-012] rejects a changed timestamp, even one inside the window', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        secret,
        timestamp,
        fc.integer({ min: -300, max: 300 }),
        async (b, s, t, d) => {
          fc.pre(d !== 0 && t + d >= 0 && t + d <= 999_999_999_999)
          const header = (await signWithReference(s, t, b)).replace(/^t=\d+/, `t=${t + d}`)
          expect(verifySignature({ header, rawBody: b, secrets: [s], nowS: t })).toEqual({
            ok: false,
            reason: 'signature-mismatch',
          })
        },
      ),
      params,
    )
  })

  it('[WHN-009] rejects another secret, and accepts either secret during a rotation [WHN-013]', async () => {
    await fc.assert(
      fc.asyncProperty(body, secret, secret, timestamp, async (b, s, other, t) => {
        fc.pre(s !== other)
        const header = await signWithReference(s, t, b)
        expect(verifySignature({ header, rawBody: b, secrets: [other], nowS: t }).ok).toBe(false)
        expect(verifySignature({ header, rawBody: b, secrets: [other, s], nowS: t }).ok).toBe(true)
        expect(verifySignature({ header, rawBody: b, secrets: [s, other], nowS: t }).ok).toBe(true)
      }),
      params,
    )
  })

  it('[WHN-011] rejects timestamps more than 300 seconds from now, either way', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        secret,
        timestamp,
        fc.integer({ min: 301, max: 10_000_000 }),
        fc.boolean(),
        async (b, s, t, d, late) => {
          const header = await signWithReference(s, t, b)
          const nowS = late ? t + d : t - d
          expect(verifySignature({ header, rawBody: b, secrets: [s], nowS })).toEqual({
            ok: false,
            reason: 'timestamp-outside-window',
          })
        },
      ),
      params,
    )
  })

  it('[WHN-008][WHN-009][WHN-011] agrees with an independent implementation on random headers', async () => {
    const hex64 = fc.string({
      unit: fc.constantFrom(...'0123456789abcdefABCDEF'),
      minLength: 63,
      maxLength: 65,
    })
    const tText = fc.string({
      unit: fc.constantFrom(...'0123456789x'),
      minLength: 0,
      maxLength: 13,
    })
    const header = fc.oneof(
      fc.tuple(tText, hex64).map(([t, v]) => `t=${t},v1=${v}`),
      fc.string({ maxLength: 90 }),
    )
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.array(secret, { minLength: 1, maxLength: 3 }),
        timestamp,
        skew,
        fc.boolean(),
        header,
        async (b, secrets, t, d, signed, random) => {
          // Half the cases are real signatures (possibly mis-timed), half arbitrary headers.
          const h = signed ? await signWithReference(secrets[0]!, t, b) : random
          const nowS = signed ? t + d * 2 : t
          const kit = verifySignature({ header: h, rawBody: b, secrets, nowS }).ok
          expect(kit).toBe(await referenceVerify(h, b, secrets, nowS))
        },
      ),
      params,
    )
  })

  it('[WHN-008] reads the header strictly', () => {
    const v = 'a'.repeat(64)
    expect(parseSignatureHeader(`t=1792056605,v1=${v}`)).toEqual({
      t: 1792056605,
      tText: '1792056605',
      v1: v,
    })
    for (const bad of [
      `t=,v1=${v}`,
      `t=1234567890123,v1=${v}`,
      `t=12,v1=${'A'.repeat(64)}`,
      `t=12,v1=${'a'.repeat(63)}`,
      `t=12,v1=${v},v0=${v}`,
      `v1=${v},t=12`,
      ` t=12,v1=${v}`,
      `t=12, v1=${v}`,
      `t=-12,v1=${v}`,
    ]) {
      expect(parseSignatureHeader(bad), bad).toBeUndefined()
    }
    expect(verifySignature({ header: undefined, rawBody: '', secrets: ['s'], nowS: 0 })).toEqual({
      ok: false,
      reason: 'missing-header',
    })
    expect(verifySignature({ header: `t=0,v1=${v}`, rawBody: '', secrets: [], nowS: 0 })).toEqual({
      ok: false,
      reason: 'no-secret',
    })
  })

  it('[WHN-010] signs the timestamp digits exactly as sent (leading zeros included)', async () => {
    const b = new TextEncoder().encode('{"event_id":"x"}')
    const v1 = await subtleHex('secret', '0000000042', b)
    expect(
      verifySignature({
        header: `t=0000000042,v1=${v1}`,
        rawBody: b,
        secrets: ['secret'],
        nowS: 42,
      }).ok,
    ).toBe(true)
    const unpadded = await subtleHex('secret', '42', b)
    expect(
      verifySignature({
        header: `t=0000000042,v1=${unpadded}`,
        rawBody: b,
        secrets: ['secret'],
        nowS: 42,
      }).ok,
    ).toBe(false)
  })
})
