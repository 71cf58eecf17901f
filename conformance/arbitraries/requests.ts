/**
 * Whole HTTP requests for one documented operation, for the fuzz test: the operation's method and path with
 * path parameters that are ids of existing resources, random UUIDs, random or percent-encoded junk or very long
 * strings; its query parameters valid per schema or junk; Authorization with the world's keys or broken values,
 * Idempotency-Key of 0 to 300 bytes, X-Correlation-Id, Last-Event-ID, Content-Type and Content-Encoding
 * variants; and bodies from the operation's request schema, mutated (mutations.ts). Everything comes from the
 * operation table of spec/openapi.yaml: nothing here names an operation.
 */
import fc from 'fast-check'
import { escapePointer, loadOpenApi } from '../../spec/index.js'
import {
  delegatedAccessNames,
  documentedOperations,
  type DocumentedOperation,
} from '../support/documented.js'
import { deref } from '../support/documented.js'
import type { RawRequest } from '../support/raw-http.js'
import type { World } from '../support/world.js'
import { fromSchema } from './from-schema.js'
import {
  correlationId,
  invalidAuthorization,
  invalidCorrelationId,
  utf8HeaderValue,
  visibleAscii,
} from './headers.js'
import {
  gzipped,
  jsonBodies,
  multipartBodies,
  strayBodies,
  validJsonBodies,
  validMultipartBodies,
  type BodyCase,
  type UploadSample,
} from './mutations.js'

type Json = Record<string, unknown>

export type Parameter = { name: string; in: string; required: boolean; schema: unknown }

/** A documented operation with what the fuzzer needs: its parameters and request body schema. */
export type FuzzOperation = DocumentedOperation & {
  parameters: Parameter[]
  /** JSON pointer of the application/json request body schema, when there is one. */
  bodyPointer?: string
  bodySchema?: unknown
}

const doc = loadOpenApi() as unknown as { paths: Record<string, Json> } & Json

/** Every operation of spec/openapi.yaml (the table of support/documented.ts) with its parameters. */
export function fuzzOperations(): FuzzOperation[] {
  return documentedOperations().map((op) => {
    const item = doc.paths[op.template]!
    const operation = item[op.method.toLowerCase()] as Json
    const parameters = [
      ...((item.parameters ?? []) as unknown[]),
      ...((operation.parameters ?? []) as unknown[]),
    ]
      .map(deref)
      .map((p) => ({
        name: String(p.name),
        in: String(p.in),
        required: p.required === true,
        schema: p.schema,
      }))
    const content = (deref(operation.requestBody).content ?? {}) as Json
    const json = content['application/json'] as Json | undefined
    return {
      ...op,
      parameters,
      ...(json
        ? {
            bodyPointer: `#/paths/${escapePointer(op.template)}/${op.method.toLowerCase()}/requestBody/content/application~1json/schema`,
            bodySchema: json.schema,
          }
        : {}),
    }
  })
}

/** What exists on the target: ids by path-parameter name, and values that make requests go deeper. */
export type Witnesses = {
  /** Ids of existing resources by the name of the path parameter (and body field) that takes them. */
  ids: Record<string, string[]>
  /** Session and Turn ids that belong together. */
  turns?: { session_id: string; turn_id: string }[]
  downloadToken?: string
  publishedVersion?: number
  contentHash?: string
  preparationRevision?: number
}

export type FuzzContext = {
  world: World
  witnesses: Witnesses
  uploads: readonly UploadSample[]
}

/** One generated request: what is sent, and notes for the printed counterexample. */
export type FuzzRequest = RawRequest & {
  operationId: string
  notes: string[]
  [fc.toStringMethod]: () => string
}

// Path parameters ------------------------------------------------------------------------------------------

const PERCENT_JUNK = [
  '%',
  '%zz',
  '%00',
  '%2F',
  '%2f..%2f',
  '%2e%2e',
  '%C0%AF',
  '%FF%FE',
  '%E2%80%AE',
  '%u0041',
  '%252F',
  '%0A',
  '%0D%0A',
  '%20',
  '+',
  '%3F',
  '%23',
  ';',
  '~',
]

/** A path segment (already encoded for the request line). */
function pathValue(name: string, ctx: FuzzContext): fc.Arbitrary<string> {
  const own = ctx.witnesses.ids[name] ?? []
  const all = [...new Set(Object.values(ctx.witnesses.ids).flat())]
  const arbs: fc.WeightedArbitrary<string>[] = [
    { weight: 2, arbitrary: fc.uuid() },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.uuid(), fc.constantFrom('upper', 'braces', 'no-dashes', 'nil', 'max', 'urn'))
        .map(([u, form]) =>
          form === 'upper'
            ? u.toUpperCase()
            : form === 'braces'
              ? `%7B${u}%7D`
              : form === 'no-dashes'
                ? u.replace(/-/g, '')
                : form === 'nil'
                  ? '00000000-0000-0000-0000-000000000000'
                  : form === 'max'
                    ? 'ffffffff-ffff-ffff-ffff-ffffffffffff'
                    : `urn:uuid:${u}`,
        ),
    },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeURIComponent),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(
          fc.oneof(
            fc.constantFrom(...PERCENT_JUNK),
            fc.string({ maxLength: 3 }).map(encodeURIComponent),
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        )
        .map((parts) => parts.join('')),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 256, max: 8000 })
        .chain((n) =>
          fc.constantFrom(
            'a'.repeat(n),
            '%41'.repeat(Math.ceil(n / 3)),
            'é'.repeat(n / 6).replace(/é/g, '%C3%A9'),
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.string({
        unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
        minLength: 1,
        maxLength: 8,
      }),
    },
    { weight: 1, arbitrary: fc.constant('') },
  ]
  if (own.length > 0) arbs.push({ weight: 10, arbitrary: fc.constantFrom(...own) })
  if (all.length > 0) arbs.push({ weight: 2, arbitrary: fc.constantFrom(...all) })
  return fc.oneof(...arbs)
}

/** The path with ids of existing resources (a random UUID where the world has none of that kind). */
function cleanPath(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<string> {
  const names = op.parameters.filter((p) => p.in === 'path').map((p) => p.name)
  return fc
    .tuple(
      ...names.map((n) => {
        const own = ctx.witnesses.ids[n] ?? []
        return own.length > 0 ? fc.constantFrom(...own) : fc.uuid()
      }),
    )
    .map((values) => {
      let i = 0
      return op.template.replace(/\{[^}]+\}/g, () => values[i++]!)
    })
}

function pathArb(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<string> {
  const names = op.parameters.filter((p) => p.in === 'path').map((p) => p.name)
  return fc
    .tuple(
      fc.tuple(...names.map((n) => pathValue(n, ctx))),
      fc.oneof(
        { weight: 12, arbitrary: fc.constant('none') },
        { weight: 1, arbitrary: fc.constantFrom('trailing-slash', 'double-slash', 'fragment') },
      ),
    )
    .map(([values, variant]) => {
      let i = 0
      let path = op.template.replace(/\{[^}]+\}/g, () => values[i++]!)
      if (variant === 'trailing-slash') path += '/'
      if (variant === 'double-slash') path = path.replace(/^\/([^/]+)\//, '/$1//')
      if (variant === 'fragment') path += '#fragment'
      return path
    })
}

// Query ----------------------------------------------------------------------------------------------------

const junkQueryValue = () =>
  fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
    fc.constantFrom(
      '',
      '-1',
      '0',
      '101',
      '1.5',
      '1e3',
      'NaN',
      'null',
      '%',
      '%zz',
      '9'.repeat(40),
      'a'.repeat(2000),
    ),
  )

/** Query parameters absent or valid per schema; the download token of the world where one is needed. */
function cleanQuery(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<string[]> {
  const params = op.parameters.filter((p) => p.in === 'query')
  const token = op.auth === 'downloadToken' && ctx.witnesses.downloadToken
  return fc
    .tuple(
      ...params.map((p) =>
        fc.oneof(
          fc.constant<string[]>([]),
          fromSchema(p.schema, { root: doc }).map((v) => [
            `${p.name}=${encodeURIComponent(String(v))}`,
          ]),
        ),
      ),
    )
    .map((values) => [...values.flat(), ...(token ? [`token=${token}`] : [])])
}

function queryArb(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<string[]> {
  const params = op.parameters.filter((p) => p.in === 'query')
  const each = params.map((p) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<string[]>([]) },
      {
        weight: 3,
        arbitrary: fromSchema(p.schema, { root: doc }).map((v) => [
          `${p.name}=${encodeURIComponent(String(v))}`,
        ]),
      },
      { weight: 2, arbitrary: junkQueryValue().map((v) => [`${p.name}=${v}`]) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(junkQueryValue(), junkQueryValue())
          .map(([a, b]) => [`${p.name}=${a}`, `${p.name}=${b}`]),
      },
      { weight: 1, arbitrary: fc.constant([p.name]) },
    ),
  )
  const delegated = delegatedAccessNames().query
  const extras = fc.oneof(
    { weight: 10, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string({ minLength: 1, maxLength: 10 }), junkQueryValue())
        .map(([k, v]) => [`${encodeURIComponent(k)}=${v}`]),
    },
    ...(delegated.length > 0
      ? [{ weight: 1, arbitrary: fc.constantFrom(...delegated).map((k) => [`${k}=someone`]) }]
      : []),
    { weight: 1, arbitrary: fc.constantFrom(['&'], ['='], ['&&=&'], ['a=1&a=2']) },
  )
  const token =
    op.auth === 'downloadToken'
      ? fc.oneof(
          ...(ctx.witnesses.downloadToken
            ? [{ weight: 4, arbitrary: fc.constant([`token=${ctx.witnesses.downloadToken}`]) }]
            : []),
          { weight: 2, arbitrary: junkQueryValue().map((v) => [`token=${v}`]) },
          { weight: 1, arbitrary: fc.constant<string[]>([]) },
          {
            weight: 1,
            arbitrary: fc.constant(
              ctx.witnesses.downloadToken
                ? [`token=${ctx.witnesses.downloadToken}`, `token=${ctx.witnesses.downloadToken}`]
                : ['token=a', 'token=b'],
            ),
          },
        )
      : fc.constant<string[]>([])
  return fc
    .tuple(fc.tuple(...each), extras, token)
    .map(([values, extra, tok]) => [...values.flat(), ...extra, ...tok])
}

// Headers --------------------------------------------------------------------------------------------------

type HeaderChoice = { headers: Record<string, string | string[]>; notes: string[] }

const latin1Junk = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      visibleAscii(),
      fc.constant(' '),
      fc.constant('\t'),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    ),
    maxLength,
  })

function authArb(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<string | string[] | undefined> {
  const keys = ctx.world.keys
  const all = Object.values(keys).filter((k): k is string => typeof k === 'string')
  const owner = ctx.world.ownerToken
  const primary = op.auth === 'ownerToken' ? owner : op.auth === 'apiKey' ? keys.full : undefined
  const arbs: fc.WeightedArbitrary<string | string[] | undefined>[] = [
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: invalidAuthorization([...all, owner ?? '\u0000']) },
    { weight: 2, arbitrary: fc.constantFrom(...all).map((k) => `Bearer ${k}`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...all, ...(owner ? [owner] : [])),
          fc.constantFrom('bearer ', 'BEARER ', 'Bearer  ', 'Bearer\t', 'Basic ', ''),
          fc.constantFrom('', ' ', 'x', '\t', '\u00ff'),
        )
        .map(([k, scheme, tail]) => `${scheme}${k}${tail}`),
    },
    { weight: 1, arbitrary: latin1Junk(200) },
  ]
  if (owner) arbs.push({ weight: 1, arbitrary: fc.constant(`Bearer ${owner}`) })
  if (primary) {
    arbs.push({ weight: 12, arbitrary: fc.constant(`Bearer ${primary}`) })
    arbs.push({ weight: 1, arbitrary: fc.constant([`Bearer ${primary}`, `Bearer ${primary}`]) })
  }
  return fc.oneof(...arbs)
}

/** An Idempotency-Key of 0 to 300 bytes (1 to 256 is valid), sometimes with non-ASCII bytes. */
const idempotencyValue = () =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ unit: visibleAscii(), minLength: 1, maxLength: 64 }) },
    {
      weight: 2,
      arbitrary: fc
        .integer({ min: 0, max: 300 })
        .chain((n) => fc.string({ unit: visibleAscii(), minLength: n, maxLength: n })),
    },
    { weight: 1, arbitrary: fc.constantFrom(255, 256, 257).map((n) => 'k'.repeat(n)) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(utf8HeaderValue),
    },
    { weight: 1, arbitrary: latin1Junk(40) },
  )

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=latin1',
  'APPLICATION/JSON',
  'application/problem+json',
  'application/merge-patch+json',
  'application/jsonx',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/mixed; boundary=fuzz-boundary-0123456789',
  'application/octet-stream',
  'application/gzip',
  '*/*',
  '',
  ';',
  'application/json, text/plain',
]

/** The headers a well-behaved client sends: its key, a fresh Idempotency-Key, the body's Content-Type. */
function cleanHeaders(
  op: FuzzOperation,
  ctx: FuzzContext,
  body: BodyCase | undefined,
): fc.Arbitrary<HeaderChoice> {
  const key =
    op.auth === 'ownerToken'
      ? ctx.world.ownerToken
      : op.auth === 'apiKey'
        ? ctx.world.keys.full
        : undefined
  return fc.string({ unit: visibleAscii(), minLength: 24, maxLength: 40 }).map((idem) => {
    const headers: Record<string, string> = {}
    if (key) headers.Authorization = `Bearer ${key}`
    if (op.idempotent) headers['Idempotency-Key'] = idem
    if (body?.contentType !== undefined) headers['Content-Type'] = body.contentType
    return { headers, notes: [] }
  })
}

function headersArb(
  op: FuzzOperation,
  ctx: FuzzContext,
  body: BodyCase | undefined,
): fc.Arbitrary<HeaderChoice> {
  const sse = /\/events$/.test(op.template)
  const optional = <T>(arb: fc.Arbitrary<T>, weightAbsent: number, weightPresent = 1) =>
    fc.oneof(
      { weight: weightAbsent, arbitrary: fc.constant(undefined) },
      { weight: weightPresent, arbitrary: arb },
    )
  return fc
    .record({
      auth: authArb(op, ctx),
      idem: op.idempotent
        ? fc.oneof(
            { weight: 8, arbitrary: idempotencyValue() },
            { weight: 1, arbitrary: fc.constant(undefined) },
            {
              weight: 1,
              arbitrary: fc.tuple(idempotencyValue(), idempotencyValue()).map(([a, b]) => [a, b]),
            },
          )
        : optional(idempotencyValue(), 12),
      correlation: optional(
        fc.oneof(correlationId(), invalidCorrelationId(), latin1Junk(150)),
        5,
        2,
      ),
      lastEventId: optional(fc.oneof(fc.uuid(), latin1Junk(80), fc.constant('')), sse ? 2 : 20),
      contentType: fc.oneof(
        { weight: 10, arbitrary: fc.constant('as-body') },
        { weight: 1, arbitrary: fc.constant('absent') },
        { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      ),
      encoding: fc.oneof(
        { weight: 14, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: fc.constant('gzip (compressed)') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'gzip',
            'deflate',
            'br',
            'identity',
            'gzip, gzip',
            'x-fuzz',
            '',
          ),
        },
      ),
      delegated: optional(fc.constantFrom(...delegatedAccessNames().headers), 20),
      extra: optional(
        fc.tuple(
          fc.constantFrom(
            'Accept',
            'Accept-Encoding',
            'Range',
            'Expect',
            'If-None-Match',
            'If-Modified-Since',
            'X-Request-Id',
            'X-HTTP-Method-Override',
            'X-Forwarded-For',
            'Origin',
            'Cookie',
            'X-Fuzz',
          ),
          fc.oneof(
            latin1Junk(100),
            fc.constantFrom(
              'text/event-stream',
              '100-continue',
              'bytes=0-0',
              '*',
              'DELETE',
              'gzip',
            ),
          ),
        ),
        10,
      ),
    })
    .map((h) => {
      const headers: Record<string, string | string[]> = {}
      const notes: string[] = []
      if (h.auth !== undefined) headers.Authorization = h.auth
      if (h.idem !== undefined) headers['Idempotency-Key'] = h.idem
      if (h.correlation !== undefined) headers['X-Correlation-Id'] = h.correlation
      if (h.lastEventId !== undefined) headers['Last-Event-ID'] = h.lastEventId
      if (h.contentType === 'as-body') {
        if (body?.contentType !== undefined) headers['Content-Type'] = body.contentType
      } else if (h.contentType !== 'absent') headers['Content-Type'] = h.contentType
      if (h.encoding !== undefined) {
        headers['Content-Encoding'] = h.encoding === 'gzip (compressed)' ? 'gzip' : h.encoding
        if (h.encoding === 'gzip (compressed)') notes.push('body gzip-compressed')
      }
      if (h.delegated !== undefined) headers[h.delegated] = 'someone@example.com'
      if (h.extra !== undefined) headers[h.extra[0]] = h.extra[1]
      return { headers, notes }
    })
}

// Bodies ---------------------------------------------------------------------------------------------------

/** Body-field hints: ids and values of the world, so schema-valid bodies also pass the checks after validation. */
function bodyHints(ctx: FuzzContext): Record<string, fc.Arbitrary<unknown>> {
  const w = ctx.witnesses
  const hints: Record<string, fc.Arbitrary<unknown>> = {}
  const files = w.ids.file_id ?? []
  if (files.length > 0) {
    hints.file_id = fc.constantFrom(...files)
    hints.file_ids = fc.subarray(files, { minLength: 1 })
  }
  if (w.publishedVersion !== undefined) hints.published_version = fc.constant(w.publishedVersion)
  if (w.contentHash !== undefined) hints.content_hash = fc.constant(w.contentHash)
  if (w.preparationRevision !== undefined)
    hints.expected_preparation_revision = fc.constant(w.preparationRevision)
  hints.question_id = fc.constantFrom('q1', 'q2', 'scope')
  hints.option_ids = fc.subarray(['eur', 'usd', 'emea', 'apac', 'amer'], {
    minLength: 1,
    maxLength: 2,
  })
  // Webhook endpoints are never called here (the clock does not move), but keep them off real addresses.
  hints.url = fc.constantFrom(
    'https://hooks.example.com/fuzz',
    'https://hooks.example.com/fuzz?x=1',
  )
  // Small reservations, so that accepted executions do not exhaust the Project's budget early.
  hints.limits = fc.constant({ max_su: 1 })
  return hints
}

/** A body the operation accepts by its schema (none for an operation without one). */
function cleanBody(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<BodyCase | undefined> {
  if (op.body === 'multipart') return validMultipartBodies(ctx.uploads)
  if (op.body === 'json' && op.bodySchema !== undefined) {
    return validJsonBodies(fromSchema(op.bodySchema, { root: doc, hints: bodyHints(ctx) }))
  }
  return fc.constant(undefined)
}

function bodyArb(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<BodyCase | undefined> {
  if (op.body === 'multipart') return multipartBodies(ctx.uploads)
  if (op.body === 'json' && op.bodySchema !== undefined) {
    return jsonBodies(fromSchema(op.bodySchema, { root: doc, hints: bodyHints(ctx) }))
  }
  return strayBodies()
}

// The request ----------------------------------------------------------------------------------------------

const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s)

/** A printable form of bytes: text when they are mostly text, else hex. */
function showBytes(bytes: Buffer): string {
  const text = bytes.toString('utf8')
  const printable = [...text].filter(
    (c) => c >= ' ' || c === '\n' || c === '\r' || c === '\t',
  ).length
  return printable / Math.max(1, [...text].length) > 0.9
    ? JSON.stringify(clip(text, 300))
    : `hex ${clip(bytes.toString('hex'), 160)}`
}

type Part = 'path' | 'query' | 'headers' | 'body'

/**
 * Which parts of a request are fuzzed; the others are what a well-behaved client sends. Mostly one part at a
 * time, so that a junk header does not hide what happens to a junk body; sometimes all at once.
 */
const FOCUS = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Part[]>(['body']) },
  { weight: 1, arbitrary: fc.constant<Part[]>(['path']) },
  { weight: 1, arbitrary: fc.constant<Part[]>(['query']) },
  { weight: 2, arbitrary: fc.constant<Part[]>(['headers']) },
  { weight: 2, arbitrary: fc.constant<Part[]>(['path', 'query', 'headers', 'body']) },
)

/** Every request shape for one operation. */
export function requestArb(op: FuzzOperation, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return FOCUS.chain((focus) => {
    const fuzzed = (part: Part) => focus.includes(part)
    return fc
      .tuple(
        fuzzed('path') ? pathArb(op, ctx) : cleanPath(op, ctx),
        fuzzed('query') ? queryArb(op, ctx) : cleanQuery(op, ctx),
        fuzzed('body') ? bodyArb(op, ctx) : cleanBody(op, ctx),
        fc.oneof(
          { weight: 9, arbitrary: fc.constant(false) },
          { weight: 1, arbitrary: fc.constant(true) },
        ),
      )
      .chain(([path, query, body, chunked]) =>
        (fuzzed('headers') ? headersArb(op, ctx, body) : cleanHeaders(op, ctx, body)).map((h) => ({
          path,
          query,
          body,
          chunked: chunked && fuzzed('headers'),
          h,
          focus,
        })),
      )
  }).map(({ path, query, body, chunked, h, focus }) => {
    const compressed = h.notes.includes('body gzip-compressed') && body ? gzipped(body) : body
    const target = query.length > 0 ? `${path}?${query.join('&')}` : path
    const notes = [
      `fuzzed: ${focus.join(', ')}`,
      ...(compressed ? [compressed.note] : ['no body']),
      ...h.notes,
    ]
    const useChunked = chunked && !!compressed && compressed.bytes.length > 1
    const request: FuzzRequest = {
      operationId: op.operationId,
      method: op.method,
      target,
      headers: h.headers,
      ...(compressed ? { body: compressed.bytes } : {}),
      ...(useChunked ? { chunked: true } : {}),
      notes,
      [fc.toStringMethod]: () => describeRequest(request),
    }
    return request
  })
}

/** Characters outside visible ASCII as \xNN (request targets and header values are bytes 0x00-0xFF). */
const escapeBytes = (s: string) =>
  s.replace(/[^\x20-\x7e]|\\/g, (c) =>
    c === '\\' ? '\\\\' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  )

/** The request as a reader reproduces it: request line, headers, body summary. */
export function describeRequest(r: RawRequest & { notes?: string[] }): string {
  const lines = [`${r.method} ${clip(escapeBytes(r.target), 300)}`]
  for (const [name, value] of Object.entries(r.headers)) {
    for (const v of Array.isArray(value) ? value : [value])
      lines.push(`${name}: "${clip(escapeBytes(v))}"`)
  }
  if (r.body !== undefined) {
    lines.push(`body (${r.body.length} bytes${r.chunked ? ', chunked' : ''}): ${showBytes(r.body)}`)
  }
  if (r.notes?.length) lines.push(`-- ${r.notes.join('; ')}`)
  return lines.join('\n  ')
}
