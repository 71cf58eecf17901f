/**
 * Filename rules (Errors: INVALID_FILENAME): a name that is empty, over 255 bytes, or contains a slash, a
 * backslash or a control character is refused with 422; every other name is accepted and kept as sent.
 * Names travel as raw UTF-8 in the multipart header (support/multipart.ts). CR and LF cannot travel raw in a
 * header, and `"` and `%` are escaped differently by clients, so generated names leave those four out.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { upload } from '../../support/uploads.js'

const target = useTarget()

const bytes = (s: string) => Buffer.byteLength(s, 'utf8')
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[/\\\u0000-\u001f\u007f-\u009f]/
const UNSENDABLE = /[\r\n"%]/

/** Text without the rule's forbidden characters (and without the four that cannot travel as is). */
const plain = (maxLength: number) =>
  fc
    .string({ unit: 'grapheme', maxLength })
    .filter((s) => !FORBIDDEN.test(s) && !UNSENDABLE.test(s))

/** A control character other than CR and LF: C0, DEL or C1. */
const control = fc
  .oneof(
    fc.integer({ min: 0x00, max: 0x1f }),
    fc.constant(0x7f),
    fc.integer({ min: 0x80, max: 0x9f }),
  )
  .filter((c) => c !== 0x0a && c !== 0x0d)
  .map((c) => String.fromCharCode(c))

const tooLong = fc
  .array(fc.constantFrom('a', 'é', '✓', '😀'), { minLength: 64, maxLength: 300 })
  .map((cs) => cs.join(''))
  .filter((s) => bytes(`${s}.txt`) > 255)
  .map((s) => `${s}.txt`)

const invalidName = fc.oneof(
  fc
    .tuple(plain(20), fc.constantFrom('/', '\\'), plain(20))
    .map(([a, sep, b]) => `${a}${sep}${b}.txt`),
  fc.tuple(plain(20), control, plain(20)).map(([a, c, b]) => `${a}${c}${b}.txt`),
  tooLong,
  fc.constant(''),
)

const validName = plain(60)
  .filter((s) => s.length > 0)
  .map((s) => `${s}.txt`)
  .filter((s) => bytes(s) <= 255)

const send = (filename: string) =>
  upload(target, { filename, contentType: 'text/plain', content: 'hello\n' })

describe('filenames', () => {
  it(`${req('ERR-045')} refuses an empty name, one over 255 bytes, or one with a slash, backslash or control character`, async () => {
    await fc.assert(
      fc.asyncProperty(invalidName, async (name) => {
        expectError(await send(name), 'INVALID_FILENAME')
      }),
      fcParams({ numRuns: 30 }),
    )
  })

  it(`${req('ERR-045')} accepts any other name of 1 to 255 bytes and keeps it as sent`, async () => {
    await fc.assert(
      fc.asyncProperty(validName, async (name) => {
        const res = await send(name)
        expect(res.status, `${JSON.stringify(name)}: ${res.text.slice(0, 200)}`).toBe(201)
        expect((res.body as { filename: string }).filename).toBe(name)
      }),
      fcParams({ numRuns: 30 }),
    )
  })

  it(`${req('ERR-045', 'SIZE-015')} accepts a name of exactly 255 bytes and refuses 256 bytes`, async () => {
    const at = `${'é'.repeat(125)}a.txt`
    expect(bytes(at)).toBe(255)
    expect((await send(at)).status).toBe(201)
    const over = `${'é'.repeat(126)}.txt`
    expect(bytes(over)).toBe(256)
    expectError(await send(over), 'INVALID_FILENAME')
  })
})
