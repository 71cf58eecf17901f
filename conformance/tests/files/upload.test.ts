/**
 * POST /v1/files (Endpoints > Files and artifacts; Resources > Files): the FileReceipt, its digest, the one
 * `file` part, compression, scope, Idempotency-Key and the 20 MiB size limit.
 */
import { randomUUID } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { multipart, sendMultipart } from '../../support/multipart.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { helloTxt, sha256Hex, upload, uploadParts } from '../../support/uploads.js'

const MiB = 1024 * 1024
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

type FileReceipt = {
  file_id: string
  status: string
  filename: string
  mime_type: string
  size_bytes: number
  sha256: string
  expires_at: string
}

const target = useTarget()

describe('uploads', () => {
  it(`${req('FILE-001', 'FILE-006', 'ERR-014')} answers 201 FileReceipt with every field for one file part`, async () => {
    const res = await upload(target, helloTxt())
    expect(res.status).toBe(201)
    const body = res.body as FileReceipt
    // Every documented field; an undocumented one is the unknown_response_fields check's (strictness.ts).
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining([
        'expires_at',
        'file_id',
        'filename',
        'mime_type',
        'sha256',
        'size_bytes',
        'status',
      ]),
    )
    expect(body.file_id).toMatch(UUID)
    expect(body.status).toBe('READY')
    expect(body.filename).toBe('hello.txt')
    expect(body.mime_type).toBe('text/plain')
    expect(Number.isNaN(Date.parse(body.expires_at))).toBe(false)
  })

  it(`${req('FILE-002', 'RES-005')} sha256 and size_bytes are the digest and length of the uploaded bytes`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 300 }).filter((s) => !s.includes('\u0000')),
        async (text) => {
          const content = Buffer.from(text, 'utf8')
          const res = await upload(target, {
            filename: 'digest.txt',
            contentType: 'text/plain',
            content,
          })
          expect(res.status).toBe(201)
          const body = res.body as FileReceipt
          expect(body.sha256).toMatch(/^[0-9a-f]{64}$/)
          expect(body.sha256).toBe(sha256Hex(content))
          expect(body.size_bytes).toBe(content.byteLength)
        },
      ),
      fcParams({ numRuns: 15 }),
    )
  })

  it(`${req('FILE-007')} refuses an upload with an extra form field`, async () => {
    const res = await uploadParts(target, [
      { name: 'file', ...helloTxt() },
      { name: 'purpose', content: 'input' },
    ])
    expectError(res, 'INVALID_INPUT')
  })

  it(`${req('FILE-007')} refuses an upload with a second file part`, async () => {
    const res = await uploadParts(target, [
      { name: 'file', ...helloTxt() },
      { name: 'file2', ...helloTxt(), filename: 'second.txt' },
    ])
    expectError(res, 'INVALID_INPUT')
  })

  it(`${req('FILE-007')} refuses two parts both named file`, async () => {
    const res = await uploadParts(target, [
      { name: 'file', ...helloTxt() },
      { name: 'file', ...helloTxt(), filename: 'second.txt' },
    ])
    expectError(res, 'INVALID_INPUT')
  })

  it(`${req('FILE-008', 'ERR-044')} refuses a compressed upload body with 415 UNSUPPORTED_MEDIA_TYPE`, async () => {
    const { body, contentType } = multipart([{ name: 'file', ...helloTxt() }])
    const res = await target.api.send('POST', '/v1/files', gzipSync(body), {
      key: target.world.keys.full,
      idem: randomUUID(),
      headers: { 'Content-Type': contentType, 'Content-Encoding': 'gzip' },
    })
    expectError(res, 'UNSUPPORTED_MEDIA_TYPE')
  })

  it(`${req('FILE-005', 'AUTH-004')} needs files:write: a key without it gets 403 INSUFFICIENT_SCOPE`, async (ctx) => {
    const readOnly = target.world.keys.readOnly
    if (!readOnly) return ctx.skip("the target's world has no read-only key")
    const res = await upload(target, helloTxt(), { key: readOnly })
    expectError(res, 'INSUFFICIENT_SCOPE')
  })

  it(`${req('EP-006')} refuses an upload without Idempotency-Key with 422 INVALID_IDEMPOTENCY_KEY`, async () => {
    const res = await sendMultipart(target.api, '/v1/files', [{ name: 'file', ...helloTxt() }], {
      key: target.world.keys.full,
    })
    expectError(res, 'INVALID_IDEMPOTENCY_KEY')
  })

  it(`${req('FILE-006', 'SIZE-007', 'ERR-043', 'SIZE-015')} accepts a file of exactly 20 MiB and refuses one byte more with 413 FILE_TOO_LARGE`, async () => {
    const exact = Buffer.alloc(20 * MiB, 'a')
    const ok = await upload(target, {
      filename: 'exact.txt',
      contentType: 'text/plain',
      content: exact,
    })
    expect(ok.status).toBe(201)
    expect((ok.body as FileReceipt).size_bytes).toBe(20 * MiB)
    const over = await upload(target, {
      filename: 'over.txt',
      contentType: 'text/plain',
      content: Buffer.alloc(20 * MiB + 1, 'a'),
    })
    expectError(over, 'FILE_TOO_LARGE')
  })

  it(`${req('AUTH-009', 'ERR-019')} answers 404 NOT_FOUND for an upload to an unknown Session`, async () => {
    const res = await upload(target, helloTxt(), { path: `/v1/sessions/${randomUUID()}/files` })
    expectError(res, 'NOT_FOUND')
  })
})
