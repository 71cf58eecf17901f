/**
 * Properties of the upload rules (Limits > Sizes and counts, Errors): allowed extension and MIME pairs, a
 * Deployment narrowing them, filename rules, and content that must really be the format its name says.
 */
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  canonicalMimeType,
  extensionOf,
  filenameProblem,
  fileTypeProblem,
  isAllowedPair,
} from './file-rules.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

/**
 * The document's allowed extensions, each with its registered MIME type; text/x-markdown is the mock's accepted
 * alias for Markdown (README). Written out here rather than taken from the module under test.
 */
const SPEC_TYPES: Record<string, string[]> = {
  txt: ['text/plain'],
  md: ['text/markdown', 'text/x-markdown'],
  markdown: ['text/markdown', 'text/x-markdown'],
  csv: ['text/csv'],
  json: ['application/json'],
  pdf: ['application/pdf'],
  png: ['image/png'],
  jpg: ['image/jpeg'],
  jpeg: ['image/jpeg'],
  webp: ['image/webp'],
  docx: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  xlsx: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  pptx: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
}
const EXTS = Object.keys(SPEC_TYPES)
const MIMES = [...new Set(Object.values(SPEC_TYPES).flat())]
const pairAllowed = (ext: string, mime: string) => SPEC_TYPES[ext]?.includes(mime) ?? false

const sample = (name: string) =>
  readFileSync(new URL(`../../fixtures/files/${name}`, import.meta.url))
/** One real file per binary format, named by the extension it really is. */
const BINARY_SAMPLES: Record<string, string> = {
  pdf: 'document.pdf',
  png: 'pixel.png',
  jpg: 'photo.jpg',
  webp: 'image.webp',
  docx: 'report.docx',
  xlsx: 'sheet.xlsx',
  pptx: 'slides.pptx',
}
const TEXT_EXTS = ['txt', 'md', 'markdown', 'csv']

/** A filename base: letters, digits, spaces, dots, dashes and some non-ASCII, never a forbidden character. */
const base = fc.string({
  unit: fc.constantFrom(...'abcXYZ019 .-_()', 'é', 'ß', '€', '名', '😀'),
  minLength: 1,
  maxLength: 20,
})
const anyCase = (s: string) =>
  fc
    .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
    .map((up) => [...s].map((ch, i) => (up[i] ? ch.toUpperCase() : ch.toLowerCase())).join(''))
/** A MIME type as a client may send it: any case, optional parameters and spaces. */
const sentMime = (mime: string) =>
  fc
    .tuple(anyCase(mime), fc.constantFrom('', '; charset=utf-8', ';charset=UTF-8 ', ' ; q=1'))
    .map(([m, p]) => `${m}${p}`)
const randomMime = fc
  .tuple(
    fc.constantFrom('text', 'application', 'image', 'audio', 'video'),
    fc.stringMatching(/^[a-z][a-z0-9.+-]{0,12}$/),
  )
  .map(([t, s]) => `${t}/${s}`)
const randomExt = fc.oneof(fc.constantFrom(...EXTS), fc.stringMatching(/^[a-z0-9]{1,5}$/))

/** Characters the rule forbids: slash, backslash and every control character (Unicode category Cc). */
const forbidden = fc.oneof(
  fc.constantFrom('/', '\\'),
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c)),
)
const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8')
/** Any Unicode scalar value, often from the C0/C1 and Latin-1 range. */
const codePoint = fc
  .oneof(
    fc.integer({ min: 0, max: 0xa0 }),
    fc.integer({ min: 0, max: 0xd7ff }),
    fc.integer({ min: 0xe000, max: 0x10ffff }),
  )
  .map((c) => String.fromCodePoint(c))

describe('file rules', () => {
  it('[SIZE-009] accepts every allowed extension with its MIME type, in any case and with parameters', () => {
    fc.assert(
      fc.property(
        fc
          .constantFrom(...EXTS.flatMap((ext) => SPEC_TYPES[ext]!.map((mime) => ({ ext, mime }))))
          .chain(({ ext, mime }) => fc.tuple(base, anyCase(ext), sentMime(mime))),
        ([name, ext, mime]) => {
          const filename = `${name}.${ext}`
          expect(extensionOf(filename)).toBe(ext.toLowerCase())
          expect(isAllowedPair(filename, mime)).toBe(true)
          expect(SPEC_TYPES[ext.toLowerCase()]).toContain(canonicalMimeType(filename))
        },
      ),
      params,
    )
  })

  it('[SIZE-010] refuses any extension and MIME type that are not an allowed pair, and names without an extension', () => {
    fc.assert(
      fc.property(
        base,
        randomExt,
        fc.oneof(fc.constantFrom(...MIMES), randomMime),
        (name, ext, mime) => {
          expect(isAllowedPair(`${name}.${ext}`, mime)).toBe(pairAllowed(ext, mime))
          expect(isAllowedPair(`.${ext}`, mime)).toBe(false)
          expect(isAllowedPair(name.replaceAll('.', ''), mime)).toBe(false)
        },
      ),
      params,
    )
  })

  it('[DEP-005] a Deployment narrowing the types accepts an allowed pair only when its type is in the list', () => {
    fc.assert(
      fc.property(
        base,
        fc.constantFrom(...EXTS),
        fc.uniqueArray(fc.constantFrom(...EXTS.map((e) => SPEC_TYPES[e]![0]!)), { maxLength: 5 }),
        fc.constantFrom('', '; charset=utf-8'),
        (name, ext, narrowed, param) => {
          const mime = SPEC_TYPES[ext]![0]!
          const allowed = isAllowedPair(
            `${name}.${ext}`,
            mime,
            narrowed.map((m) => m + param),
          )
          expect(allowed).toBe(narrowed.includes(mime))
          expect(isAllowedPair(`${name}.${ext}`, mime, null)).toBe(true)
        },
      ),
      params,
    )
  })

  it('[ERR-045] a filename is allowed exactly when it is 1 to 255 UTF-8 bytes without slash, backslash or control character', () => {
    const name = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '.', ' '), maxLength: 140 }),
      fc.string({ unit: codePoint, maxLength: 40 }),
    )
    fc.assert(
      fc.property(name, (n) => {
        // The document's control characters: Unicode category Cc (U+0000-001F, U+007F-009F).
        const ok = n.length > 0 && utf8Bytes(n) <= 255 && !/[/\\]|\p{Cc}/u.test(n)
        expect(filenameProblem(n)).toBe(ok ? undefined : 'INVALID_FILENAME')
      }),
      params,
    )
  })

  it('[ERR-045] a slash, backslash or control character anywhere, an empty name or one over 255 bytes is refused', () => {
    fc.assert(
      fc.property(
        base,
        forbidden,
        fc.nat(),
        fc.constantFrom('a', 'é', '€', '😀'),
        (n, bad, at, ch) => {
          expect(filenameProblem(n)).toBeUndefined()
          const i = at % (n.length + 1)
          expect(filenameProblem(n.slice(0, i) + bad + n.slice(i))).toBe('INVALID_FILENAME')
          expect(filenameProblem('')).toBe('INVALID_FILENAME')
          // Fill up to exactly 255 bytes with `ch`, then one more character passes the limit.
          const room = 255 - utf8Bytes(n)
          const fill = ch.repeat(Math.floor(room / utf8Bytes(ch)))
          const full = n + fill + 'a'.repeat(room - utf8Bytes(fill))
          expect(utf8Bytes(full)).toBe(255)
          expect(filenameProblem(full)).toBeUndefined()
          expect(filenameProblem(full + ch)).toBe('INVALID_FILENAME')
        },
      ),
      params,
    )
  })

  it('[SIZE-009][SIZE-010][ERR-047] text types take any UTF-8 without NUL, JSON takes any JSON text; other bytes are refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: codePoint, maxLength: 60 }),
        fc.jsonValue({ maxDepth: 3 }),
        fc.constantFrom(...TEXT_EXTS),
        fc.nat(),
        fc.constantFrom(0xff, 0xc0, 0x80, 0xfe),
        async (text0, json, ext, at, badByte) => {
          const text = text0.replaceAll('\u0000', '')
          const bytes = new Uint8Array(Buffer.from(text, 'utf8'))
          const mime = SPEC_TYPES[ext]![0]!
          expect(await fileTypeProblem(`f.${ext}`, mime, bytes)).toBeUndefined()
          const i = at % (bytes.length + 1)
          const withNul = Uint8Array.from([...bytes.slice(0, i), 0, ...bytes.slice(i)])
          expect(await fileTypeProblem(`f.${ext}`, mime, withNul)).toBe('UNSUPPORTED_FILE_TYPE')
          const notUtf8 = Uint8Array.from([...bytes.slice(0, i), badByte, ...bytes.slice(i)])
          expect(await fileTypeProblem(`f.${ext}`, mime, notUtf8)).toBe('UNSUPPORTED_FILE_TYPE')

          const jsonText = new Uint8Array(Buffer.from(JSON.stringify(json, null, at % 3), 'utf8'))
          expect(await fileTypeProblem('d.json', 'application/json', jsonText)).toBeUndefined()
          const broken = new Uint8Array(Buffer.from(`${JSON.stringify(json)} x`, 'utf8'))
          expect(await fileTypeProblem('d.json', 'application/json', broken)).toBe(
            'UNSUPPORTED_FILE_TYPE',
          )
        },
      ),
      { ...params, numRuns: Math.min(numRuns, 50) },
    )
  })

  it('[SIZE-009][SIZE-010][ERR-047] a binary file is accepted under its own extension and refused under another binary or JSON one; random bytes are refused', async () => {
    const exts = Object.keys(BINARY_SAMPLES)
    for (const [real, file] of Object.entries(BINARY_SAMPLES)) {
      const bytes = new Uint8Array(sample(file))
      for (const claimed of [...exts, 'jpeg', 'json']) {
        const same = claimed === real || (claimed === 'jpeg' && real === 'jpg')
        const problem = await fileTypeProblem(`x.${claimed}`, SPEC_TYPES[claimed]![0]!, bytes)
        expect(problem, `${file} as .${claimed}`).toBe(same ? undefined : 'UNSUPPORTED_FILE_TYPE')
      }
      // Under a text extension the bytes are judged as text: binary with NUL bytes is refused. (The PDF
      // sample is plain ASCII, so it is also acceptable text.)
      if (bytes.includes(0))
        for (const claimed of TEXT_EXTS)
          expect(await fileTypeProblem(`x.${claimed}`, SPEC_TYPES[claimed]![0]!, bytes)).toBe(
            'UNSUPPORTED_FILE_TYPE',
          )
    }
    expect(
      await fileTypeProblem('x.png', 'image/png', new Uint8Array(sample('not-really.png'))),
    ).toBe('UNSUPPORTED_FILE_TYPE')
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 256 }),
        fc.constantFrom(...exts),
        async (b, ext) => {
          expect(await fileTypeProblem(`r.${ext}`, SPEC_TYPES[ext]![0]!, b)).toBe(
            'UNSUPPORTED_FILE_TYPE',
          )
        },
      ),
      { ...params, numRuns: Math.min(numRuns, 50) },
    )
  })

  it('[ERR-047] unsafe content is refused: a macro document or an encrypted PDF', async () => {
    expect(
      await fileTypeProblem('m.docx', SPEC_TYPES.docx![0]!, new Uint8Array(sample('macro.docx'))),
    ).toBe('UNSUPPORTED_FILE_TYPE')
    expect(
      await fileTypeProblem('e.pdf', 'application/pdf', new Uint8Array(sample('encrypted.pdf'))),
    ).toBe('UNSUPPORTED_FILE_TYPE')
  })
})
