/**
 * Upload idempotency (Endpoints > Files and artifacts; Retry rules 3): the same Idempotency-Key with the same
 * file returns the same FileReceipt; with a different file it is 409 IDEMPOTENCY_CONFLICT.
 */
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { upload } from '../../support/uploads.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

const text = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 200 })
  .filter((s) => !s.includes('\u0000'))
const txt = (content: string) => ({
  filename: 'retry.txt',
  contentType: 'text/plain',
  content: Buffer.from(content, 'utf8'),
})

describe('upload idempotency', () => {
  it(`${req('IDEM-003')} returns the same FileReceipt for the same key and the same file`, async () => {
    await fc.assert(
      fc.asyncProperty(text, async (content) => {
        const idem = randomUUID()
        const first = await upload(target, txt(content), { idem })
        expect(first.status).toBe(201)
        const again = await upload(target, txt(content), { idem })
        expect(again.status).toBe(201)
        expect(again.body).toEqual(first.body)
      }),
      fcParams({ numRuns: 15 }),
    )
  })

  it(`${req('IDEM-004', 'ERR-041')} refuses the same key with a different file with 409 IDEMPOTENCY_CONFLICT`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-004')
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(text, text).filter(([a, b]) => a !== b),
        async ([a, b]) => {
          const idem = randomUUID()
          expect((await upload(target, txt(a), { idem })).status).toBe(201)
          expectError(await upload(target, txt(b), { idem }), 'IDEMPOTENCY_CONFLICT')
        },
      ),
      fcParams({ numRuns: 15 }),
    )
  })

  it(`${req('IDEM-003')} gives different keys with the same file different file ids`, async () => {
    const a = await upload(target, txt('same bytes'))
    const b = await upload(target, txt('same bytes'))
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect((a.body as { file_id: string }).file_id).not.toBe(
      (b.body as { file_id: string }).file_id,
    )
  })
})
