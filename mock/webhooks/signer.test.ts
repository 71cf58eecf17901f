/** The mock's signer agrees with the receiver kit and with Web Crypto (WHN-008, WHN-009, WHN-012). */
import { webcrypto } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { verifySignature } from './kit/verify.js'
import { signatureHeader, unixSeconds } from './signer.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)

async function subtleHex(secret: string, t: number, body: Uint8Array): Promise<string> {
  const key = await webcrypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const msg = new Uint8Array([...new TextEncoder().encode(`${t}.`), ...body])
  return Buffer.from(await webcrypto.subtle.sign('HMAC', key, msg)).toString('hex')
}

describe('signer', () => {
  it('[WHN-008][WHN-009] signs t=<virtual unix seconds>,v1=<HMAC-SHA256> that Web Crypto and the kit agree on', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 4096 }),
        fc.string({ minLength: 1, maxLength: 48 }),
        fc.integer({ min: 0, max: 999_999_999_999_999 }),
        async (body, secret, nowMs) => {
          const header = signatureHeader(secret, nowMs, body)
          const t = unixSeconds(nowMs)
          expect(header).toMatch(/^t=[0-9]{1,12},v1=[0-9a-f]{64}$/)
          expect(header).toBe(`t=${t},v1=${await subtleHex(secret, t, body)}`)
          expect(verifySignature({ header, rawBody: body, secrets: [secret], nowS: t })).toEqual({
            ok: true,
            t,
          })
        },
      ),
      { numRuns },
    )
  })
})
