/**
 * Allowed file types (Limits > Sizes and counts; Errors: UNSUPPORTED_FILE_TYPE): every allowed extension with
 * its MIME type and real content is accepted; a mismatched pair, another extension, content that is not that
 * format, a macro document or an encrypted PDF is refused with 415.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { ALLOWED_TYPES, sample, sha256Hex, upload } from '../../support/uploads.js'

const target = useTarget()

const baseName = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/)

/** The text-like types, which a wider MIME table may pair with each other. */
const TEXT_LIKE = new Set(['txt', 'md', 'markdown', 'csv', 'json'])
/** A pair no MIME table can call a match: the two types are of different kinds (not both text-like). */
const clearMismatch = (a: { ext: string }, b: { ext: string }): boolean =>
  !(TEXT_LIKE.has(a.ext) && TEXT_LIKE.has(b.ext))

describe('file types', () => {
  it(`${req('SIZE-009', 'FILE-002')} accepts every allowed extension with its MIME type and real content`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ALLOWED_TYPES), baseName, async (type, base) => {
        const content = sample(type.sample)
        const filename = `${base}.${type.ext}`
        const res = await upload(target, { filename, contentType: type.mime, content })
        expect(res.status, `${filename} ${type.mime}: ${res.text.slice(0, 200)}`).toBe(201)
        const body = res.body as { filename: string; mime_type: string; sha256: string }
        expect(body.filename).toBe(filename)
        expect(body.mime_type).toBe(type.mime)
        expect(body.sha256).toBe(sha256Hex(content))
      }),
      fcParams({ numRuns: 30 }),
    )
  })

  // "extension and MIME type must match" lists the extensions, not the pair table: a target may accept more
  // MIME types for an extension (text/plain for .csv, .md or .json, say). A pair of two text-like types is
  // therefore refused only on the mock; one that crosses kinds (a PNG sent as application/pdf, a .txt as
  // image/png, a .docx as a spreadsheet) is no match under any table and is refused on every target.
  it(`${req('SIZE-010', 'ERR-047', 'ERR-022')} refuses an allowed extension sent with another type's MIME type`, async () => {
    const pairs = fc
      .tuple(fc.constantFrom(...ALLOWED_TYPES), fc.constantFrom(...ALLOWED_TYPES))
      .filter(([a, b]) => a.mime !== b.mime)
    await fc.assert(
      fc.asyncProperty(pairs, baseName, async ([type, other], base) => {
        const res = await upload(target, {
          filename: `${base}.${type.ext}`,
          contentType: other.mime,
          content: sample(type.sample),
        })
        if (clearMismatch(type, other)) expectError(res, 'UNSUPPORTED_FILE_TYPE')
        else
          await mockChoice(
            target,
            `not shown: .${type.ext} is not accepted as ${other.mime}`,
            () => {
              expectError(res, 'UNSUPPORTED_FILE_TYPE')
            },
          )
      }),
      fcParams({ numRuns: 20 }),
    )
  })

  it(`${req('SIZE-010', 'ERR-047', 'ERR-022')} refuses a clear mismatch of extension and MIME type on every target, a text-like pair on the mock`, async () => {
    for (const [filename, mime, content] of [
      ['hello.txt', 'image/png', 'hello.txt'],
      ['pixel.png', 'application/pdf', 'pixel.png'],
      ['document.pdf', 'image/jpeg', 'document.pdf'],
      [
        'report.docx',
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'report.docx',
      ],
    ] as const) {
      const res = await upload(target, { filename, contentType: mime, content: sample(content) })
      expectError(res, 'UNSUPPORTED_FILE_TYPE')
    }
    // Text-like pairs a wider table may accept: refused on the mock only.
    for (const [filename, mime, content] of [
      ['table.csv', 'text/plain', 'table.csv'],
      ['notes.md', 'text/plain', 'notes.md'],
      ['data.json', 'text/plain', 'data.json'],
    ] as const) {
      const res = await upload(target, { filename, contentType: mime, content: sample(content) })
      await mockChoice(
        target,
        `not shown: .${filename.split('.')[1]} is not accepted as ${mime}`,
        () => {
          expectError(res, 'UNSUPPORTED_FILE_TYPE')
        },
      )
    }
  })

  it(`${req('SIZE-010', 'ERR-047')} refuses an extension outside the allowed list, or none`, async () => {
    const others = fc.constantFrom('exe', 'html', 'gif', 'zip', 'svg', 'doc', 'xls', 'sh', 'docm')
    const mimes = fc.constantFrom('application/octet-stream', 'text/plain', 'text/html')
    await fc.assert(
      fc.asyncProperty(others, mimes, baseName, fc.boolean(), async (ext, mime, base, noExt) => {
        const res = await upload(target, {
          filename: noExt ? base : `${base}.${ext}`,
          contentType: mime,
          content: sample('hello.txt'),
        })
        expectError(res, 'UNSUPPORTED_FILE_TYPE')
      }),
      fcParams({ numRuns: 15 }),
    )
  })

  it(`${req('ERR-047')} refuses content that is not the named format (text named .png)`, async () => {
    const res = await upload(target, {
      filename: 'not-really.png',
      contentType: 'image/png',
      content: sample('not-really.png'),
    })
    expectError(res, 'UNSUPPORTED_FILE_TYPE')
  })

  it(`${req('ERR-047')} refuses binary content named .txt`, async () => {
    const res = await upload(target, {
      filename: 'binary.txt',
      contentType: 'text/plain',
      content: sample('binary.txt'),
    })
    expectError(res, 'UNSUPPORTED_FILE_TYPE')
  })

  it(`${req('ERR-047')} refuses a PDF named .docx`, async () => {
    const res = await upload(target, {
      filename: 'report.docx',
      contentType: ALLOWED_TYPES.find((t) => t.ext === 'docx')!.mime,
      content: sample('document.pdf'),
    })
    expectError(res, 'UNSUPPORTED_FILE_TYPE')
  })

  it(`${req('ERR-047')} refuses a macro document`, async () => {
    const res = await upload(target, {
      filename: 'macro.docx',
      contentType: ALLOWED_TYPES.find((t) => t.ext === 'docx')!.mime,
      content: sample('macro.docx'),
    })
    expectError(res, 'UNSUPPORTED_FILE_TYPE')
  })

  it(`${req('ERR-047')} refuses an encrypted PDF`, async () => {
    const res = await upload(target, {
      filename: 'encrypted.pdf',
      contentType: 'application/pdf',
      content: sample('encrypted.pdf'),
    })
    expectError(res, 'UNSUPPORTED_FILE_TYPE')
  })
})
