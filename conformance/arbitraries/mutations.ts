/**
 * Request bodies for fuzzing, each with a note saying what it is: JSON values of a schema (from-schema.ts) sent
 * as they are or mutated (a field dropped or added, a value of the wrong type, nesting thousands deep, a string
 * that takes the body just over 64 KiB, broken JSON text, other encodings), empty and binary bodies, and
 * multipart/form-data bodies for the upload operations, well-formed or broken.
 */
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { anyJson } from './from-schema.js'

export type BodyCase = {
  bytes: Buffer
  /** The Content-Type that goes with the bytes (the header arbitraries may send another). */
  contentType: string | undefined
  /** What the body is, for the printed counterexample. */
  note: string
  /** The JSON value when the bytes are exactly its UTF-8 JSON text. */
  json?: unknown
}

/** The JSON Schema limit on request bodies ("at most 64 KiB"). */
export const JSON_BODY_LIMIT = 64 * 1024

type Path = (string | number)[]
type Json = unknown

const JSON_TYPE = 'application/json'
const describePath = (path: Path) =>
  '$' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')

/** Every node of a JSON value (preorder, at most `cap`), with its path. */
function nodes(value: Json, cap = 400): { path: Path; value: Json }[] {
  const out: { path: Path; value: Json }[] = []
  const walk = (v: Json, path: Path) => {
    if (out.length >= cap) return
    out.push({ path, value: v })
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]))
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v as Record<string, Json>)) walk(x, [...path, k])
  }
  walk(value, [])
  return out
}

/** A copy of `root` with the node at `path` replaced (or deleted, when `value` is DELETE). */
const DELETE = Symbol('delete')
function setAt(root: Json, path: Path, value: Json | typeof DELETE): Json {
  if (path.length === 0) return value === DELETE ? undefined : value
  const [head, ...rest] = path
  if (Array.isArray(root)) {
    const copy = [...root]
    if (rest.length === 0 && value === DELETE) copy.splice(head as number, 1)
    else copy[head as number] = setAt(copy[head as number], rest, value)
    return copy
  }
  const copy = { ...(root as Record<string, Json>) }
  if (rest.length === 0 && value === DELETE) delete copy[head as string]
  else copy[head as string] = setAt(copy[head as string], rest, value)
  return copy
}

const jsonCase = (value: Json, note: string): BodyCase => ({
  bytes: Buffer.from(JSON.stringify(value) ?? '', 'utf8'),
  contentType: JSON_TYPE,
  note,
  json: value,
})

/** A JSON text where the node at `path` is replaced by raw text (for values JSON.stringify cannot build). */
function withRawText(root: Json, path: Path, raw: string): string {
  const sentinel = '\u0000FUZZ-SENTINEL\u0000'
  const text = JSON.stringify(setAt(root, path, sentinel))
  return text.replace(JSON.stringify(sentinel), () => raw)
}

const typeOf = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

/** Values of every JSON type and some awkward numbers and strings. */
const REPLACEMENTS: Json[] = [
  0,
  -1,
  1.5,
  2 ** 53 + 1,
  1e308,
  -1e-308,
  '',
  'x',
  '0',
  'true',
  'null',
  ' ',
  '\u0000',
  '\u202e',
  true,
  false,
  null,
  [],
  [null],
  {},
  { '': null },
]

const fieldName = () =>
  fc.oneof(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'type', 'status', '$ref', ''),
  )

const depthArb = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 2, max: 200 }) },
    { weight: 2, arbitrary: fc.integer({ min: 200, max: 5000 }) },
    { weight: 1, arbitrary: fc.constantFrom(5000, 10_000, 30_000) },
  )

/** Kinds of broken JSON text. */
const BROKEN = [
  'truncated',
  'trailing-garbage',
  'single-quotes',
  'trailing-comma',
  'comment',
  'bom',
  'nan',
  'unquoted-key',
  'invalid-utf8',
  'duplicate-keys',
  'whitespace-only',
  'two-documents',
] as const

function broken(text: string, kind: (typeof BROKEN)[number], at: number): Buffer {
  const cut = text.length === 0 ? 0 : at % text.length
  switch (kind) {
    case 'truncated':
      return Buffer.from(text.slice(0, cut))
    case 'trailing-garbage':
      return Buffer.from(`${text} }x`)
    case 'single-quotes':
      return Buffer.from(text.replace(/"/g, "'") || "'x'")
    case 'trailing-comma':
      return Buffer.from(text.replace(/([}\]])$/, ',$1') || '[1,]')
    case 'comment':
      return Buffer.from(`/* fuzz */ ${text}`)
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
    case 'nan':
      return Buffer.from(text.startsWith('{') ? `{"n":NaN,${text.slice(1)}` : 'NaN')
    case 'unquoted-key':
      return Buffer.from(text.replace(/"([A-Za-z_]+)":/, '$1:') || '{a:1}')
    case 'invalid-utf8': {
      const bytes = Buffer.from(text)
      return Buffer.concat([
        bytes.subarray(0, cut),
        Buffer.from([0xff, 0xc0, 0xaf]),
        bytes.subarray(cut),
      ])
    }
    case 'duplicate-keys':
      return Buffer.from(text.startsWith('{"') ? `{"a":1,"a":2,${text.slice(1)}` : '{"a":1,"a":2}')
    case 'whitespace-only':
      return Buffer.from(' \r\n\t ')
    case 'two-documents':
      return Buffer.from(`${text}${text}`)
  }
}

/** A string of `bytes` UTF-8 bytes: ASCII, or mostly two-byte characters (bytes differ from characters). */
function stringOfBytes(bytes: number, multibyte: boolean): string {
  if (bytes <= 0) return ''
  if (!multibyte) return 'x'.repeat(bytes)
  return 'é'.repeat(Math.floor(bytes / 2)) + 'x'.repeat(bytes % 2)
}

/**
 * A body whose total size is JSON_BODY_LIMIT + delta bytes: a string node (or a new field) holds the padding.
 */
function hugeBody(base: Json, index: number, delta: number, multibyte: boolean): BodyCase {
  const strings = nodes(base).filter((n) => typeof n.value === 'string' && n.path.length > 0)
  const isObject = base !== null && typeof base === 'object' && !Array.isArray(base)
  const path: Path =
    strings.length > 0 ? strings[index % strings.length]!.path : isObject ? ['padding'] : []
  const withoutPad = Buffer.byteLength(withRawText(base, path, '""'))
  const target = JSON_BODY_LIMIT + delta
  const pad = stringOfBytes(target - withoutPad, multibyte)
  const text = withRawText(base, path, JSON.stringify(pad))
  return {
    bytes: Buffer.from(text),
    contentType: JSON_TYPE,
    note: `${Buffer.byteLength(text)}-byte JSON (64 KiB ${delta >= 0 ? '+' : '-'} ${Math.abs(delta)}), ${multibyte ? 'two-byte' : 'ASCII'} padding at ${describePath(path)}`,
  }
}

/** Schema-valid JSON bodies. */
export const validJsonBodies = (valid: fc.Arbitrary<Json>): fc.Arbitrary<BodyCase> =>
  valid.map((v) => jsonCase(v, 'JSON from the schema'))

/**
 * Bodies for a JSON operation: schema-valid values (from `valid`) and their mutations. The weights keep about
 * half of the bodies valid so that the rules behind validation are reached too.
 */
export function jsonBodies(valid: fc.Arbitrary<Json>): fc.Arbitrary<BodyCase> {
  return fc.oneof(
    { weight: 10, arbitrary: validJsonBodies(valid) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.nat()).map(([v, i]) => {
        const candidates = nodes(v).filter(
          (n) => n.value && typeof n.value === 'object' && Object.keys(n.value).length > 0,
        )
        if (candidates.length === 0) return jsonCase(v, 'JSON from the schema (nothing to drop)')
        const node = candidates[i % candidates.length]!
        const keys = Object.keys(node.value as object)
        const key = Array.isArray(node.value) ? i % keys.length : keys[i % keys.length]!
        const path = [...node.path, key]
        return jsonCase(
          setAt(v, path, DELETE),
          `JSON from the schema without ${describePath(path)}`,
        )
      }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.nat(), fieldName(), anyJson()).map(([v, i, name, extra]) => {
        const objects = nodes(v).filter(
          (n) => n.value && typeof n.value === 'object' && !Array.isArray(n.value),
        )
        if (objects.length === 0) return jsonCase(v, 'JSON from the schema (no object to extend)')
        const node = objects[i % objects.length]!
        const value = setAt(v, [...node.path, name], extra)
        // `__proto__` as an own key survives only in the text.
        const text =
          name === '__proto__'
            ? withRawText(
                v,
                node.path,
                JSON.stringify(node.value).replace(
                  /^\{/,
                  `{"__proto__":${JSON.stringify(extra)}${Object.keys(node.value as object).length ? ',' : ''}`,
                ),
              )
            : JSON.stringify(value)
        return {
          bytes: Buffer.from(text),
          contentType: JSON_TYPE,
          note: `JSON from the schema plus undeclared ${describePath([...node.path, name])}`,
        }
      }),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.nat(), fc.constantFrom(...REPLACEMENTS))
        .map(([v, i, replacement]) => {
          const all = nodes(v)
          const node = all[i % all.length]!
          const value =
            typeOf(replacement) === typeOf(node.value)
              ? REPLACEMENTS.find((r) => typeOf(r) !== typeOf(node.value))
              : replacement
          return jsonCase(
            setAt(v, node.path, value),
            `JSON from the schema with ${describePath(node.path)} = ${JSON.stringify(value)}`,
          )
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.nat(), depthArb(), fc.constantFrom('array', 'object'))
        .map(([v, i, depth, kind]) => {
          const all = nodes(v)
          const node = all[i % all.length]!
          const raw =
            kind === 'array'
              ? '['.repeat(depth) + ']'.repeat(depth)
              : '{"a":'.repeat(depth) + '0' + '}'.repeat(depth)
          return {
            bytes: Buffer.from(withRawText(v, node.path, raw)),
            contentType: JSON_TYPE,
            note: `JSON from the schema with ${describePath(node.path)} = ${kind} nested ${depth} deep`,
          }
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          valid,
          fc.nat(),
          fc.oneof(fc.integer({ min: -4, max: 4 }), fc.integer({ min: 5, max: 4096 })),
          fc.boolean(),
        )
        .map(([v, i, delta, multibyte]) => hugeBody(v, i, delta, multibyte)),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.constantFrom(...BROKEN), fc.nat()).map(([v, kind, at]) => ({
        bytes: broken(JSON.stringify(v), kind, at),
        contentType: JSON_TYPE,
        note: `broken JSON text (${kind})`,
      })),
    },
    { weight: 1, arbitrary: otherBodies() },
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, fc.constantFrom('utf16le', 'utf16le-bom', 'latin1'))
        .map(([v, encoding]) => {
          const text = JSON.stringify(v)
          const bytes =
            encoding === 'latin1'
              ? Buffer.from(text, 'latin1')
              : Buffer.concat([
                  encoding === 'utf16le-bom' ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0),
                  Buffer.from(text, 'utf16le'),
                ])
          return { bytes, contentType: JSON_TYPE, note: `JSON from the schema encoded ${encoding}` }
        }),
    },
  )
}

/** Bodies that are not an object's JSON: empty, binary, JSON of another type. */
export function otherBodies(): fc.Arbitrary<BodyCase> {
  return fc.oneof(
    fc.constant<BodyCase>({ bytes: Buffer.alloc(0), contentType: JSON_TYPE, note: 'empty body' }),
    fc.uint8Array({ minLength: 1, maxLength: 600 }).map((b) => ({
      bytes: Buffer.from(b),
      contentType: JSON_TYPE,
      note: `${b.length} random bytes`,
    })),
    fc
      .oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, 0, '', [], 'null'))
      .filter((v) => typeOf(v) !== 'object')
      .map((v) => jsonCase(JSON.parse(JSON.stringify(v)) as Json, `JSON ${typeOf(v)} at the top`)),
  )
}

/** Bodies for an operation without a request body: mostly none, sometimes one. */
export function strayBodies(): fc.Arbitrary<BodyCase | undefined> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: anyJson().map((v) => jsonCase(v, 'an unexpected JSON body')) },
    { weight: 1, arbitrary: otherBodies() },
  )
}

/** The gzip of a body, under the same content type (EP-004: compressed bodies are refused). */
export const gzipped = (body: BodyCase): BodyCase => ({
  bytes: gzipSync(body.bytes),
  contentType: body.contentType,
  note: `gzip of: ${body.note}`,
})

// multipart/form-data ---------------------------------------------------------------------------------------

export type UploadSample = { ext: string; mime: string; content: Buffer }

type PartSpec = {
  name: string | undefined
  filename: string | undefined
  contentType: string | undefined
  content: Buffer
}

const BOUNDARY = 'fuzz-boundary-0123456789'

function buildMultipart(parts: PartSpec[], boundary = BOUNDARY, eol = '\r\n'): Buffer {
  const chunks: Buffer[] = []
  for (const p of parts) {
    let head = `--${boundary}${eol}Content-Disposition: form-data`
    if (p.name !== undefined) head += `; name="${p.name}"`
    if (p.filename !== undefined) head += `; filename="${p.filename}"`
    head += eol
    if (p.contentType !== undefined) head += `Content-Type: ${p.contentType}${eol}`
    chunks.push(Buffer.from(head + eol, 'utf8'), p.content, Buffer.from(eol))
  }
  chunks.push(Buffer.from(`--${boundary}--${eol}`))
  return Buffer.concat(chunks)
}

const filenameArb = (samples: readonly UploadSample[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...samples).map((s) => `fuzz.${s.ext}`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.string({ minLength: 0, maxLength: 40 }), fc.constantFrom(...samples))
        .map(([stem, s]) => `${stem.replace(/["\r\n]/g, '_')}.${s.ext}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '.txt',
        '../../etc/passwd.txt',
        'C:\\temp\\a.txt',
        'a.exe',
        'noext',
        'a.TXT',
        'a.txt.exe',
        'résumé.txt',
        '日本語.md',
        'a\u0000b.txt',
        `${'x'.repeat(300)}.txt`,
        'a%22b.txt',
      ),
    },
  )

const partArb = (samples: readonly UploadSample[]): fc.Arbitrary<PartSpec> =>
  fc.record({
    name: fc.oneof(
      { weight: 6, arbitrary: fc.constant('file') },
      { weight: 1, arbitrary: fc.constantFrom(undefined, '', 'files', 'File', 'file[]', 'meta') },
    ),
    filename: fc.oneof(
      { weight: 6, arbitrary: filenameArb(samples) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    contentType: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...samples).map((s) => s.mime) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          undefined,
          'application/octet-stream',
          'application/x-msdownload',
          'text/html',
          '',
          'text/plain; charset=utf-16',
        ),
      },
    ),
    content: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...samples).map((s) => s.content) },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)) },
      { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
    ),
  })

/** One well-formed part named `file` holding a sample of an allowed type, named and typed to match. */
const validPart = (samples: readonly UploadSample[]) =>
  fc.constantFrom(...samples).map<PartSpec>((s) => ({
    name: 'file',
    filename: `fuzz.${s.ext}`,
    contentType: s.mime,
    content: s.content,
  }))

const describeParts = (parts: PartSpec[]) =>
  parts
    .map(
      (p) =>
        `[name=${JSON.stringify(p.name)} filename=${JSON.stringify(p.filename && p.filename.length > 60 ? `${p.filename.slice(0, 40)}…(${p.filename.length})` : p.filename)} type=${JSON.stringify(p.contentType)} ${p.content.length} bytes]`,
    )
    .join(' ')

/** A valid upload: one part named `file` holding a sample of an allowed type. */
export const validMultipartBodies = (samples: readonly UploadSample[]): fc.Arbitrary<BodyCase> =>
  validPart(samples).map((p) => ({
    bytes: buildMultipart([p]),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    note: `one valid file part: ${describeParts([p])}`,
  }))

/** Bodies for an upload operation: a valid one-file form, forms with other parts, and broken framing. */
export function multipartBodies(samples: readonly UploadSample[]): fc.Arbitrary<BodyCase> {
  const type = (boundary = BOUNDARY) => `multipart/form-data; boundary=${boundary}`
  const form = (parts: PartSpec[], note: string): BodyCase => ({
    bytes: buildMultipart(parts),
    contentType: type(),
    note: `${note}: ${describeParts(parts)}`,
  })
  const anyParts = fc.array(partArb(samples), { minLength: 0, maxLength: 3 })
  return fc.oneof(
    { weight: 6, arbitrary: validMultipartBodies(samples) },
    { weight: 4, arbitrary: anyParts.map((parts) => form(parts, 'form parts')) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          validPart(samples),
          fc.nat(),
          fc.constantFrom(
            'truncated',
            'no-final-boundary',
            'lf-only',
            'other-boundary',
            'no-boundary',
            'preamble',
            'quoted-boundary',
          ),
        )
        .map(([p, at, kind]): BodyCase => {
          const whole = buildMultipart([p])
          switch (kind) {
            case 'truncated':
              return {
                bytes: whole.subarray(0, at % whole.length),
                contentType: type(),
                note: `one valid file part, cut at byte ${at % whole.length} of ${whole.length}`,
              }
            case 'no-final-boundary':
              return {
                bytes: whole.subarray(0, whole.length - BOUNDARY.length - 6),
                contentType: type(),
                note: 'one valid file part without the closing boundary',
              }
            case 'lf-only':
              return {
                bytes: buildMultipart([p], BOUNDARY, '\n'),
                contentType: type(),
                note: 'one valid file part with LF line ends',
              }
            case 'other-boundary':
              return {
                bytes: whole,
                contentType: type('not-the-boundary'),
                note: 'one valid file part under another boundary',
              }
            case 'no-boundary':
              return {
                bytes: whole,
                contentType: 'multipart/form-data',
                note: 'one valid file part, no boundary parameter',
              }
            case 'preamble':
              return {
                bytes: Buffer.concat([Buffer.from('preamble garbage\r\n'), whole]),
                contentType: type(),
                note: 'one valid file part after a preamble',
              }
            case 'quoted-boundary':
              return {
                bytes: whole,
                contentType: `multipart/form-data; boundary="${BOUNDARY}"`,
                note: 'one valid file part, quoted boundary parameter',
              }
          }
        }),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 1024 }).map((b) => ({
        bytes: Buffer.from(b),
        contentType: type(),
        note: `${b.length} random bytes as multipart`,
      })),
    },
    {
      weight: 1,
      arbitrary: anyJson().map((v) => ({
        ...jsonCase(v, 'a JSON body to an upload operation'),
      })),
    },
  )
}
