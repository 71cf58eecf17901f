/**
 * Malformed HTTP/1.1 framing, as bytes for a raw socket: a bad request line, an unknown method, headers or a URL
 * over 16 KiB, broken chunked encoding, a Content-Length larger than the body, stray bytes after a complete
 * request, other damage to the header block, odd request forms. Each variant takes one number (a size, a count,
 * a seed for random bytes); `framingExamples` is every variant once with a typical number, `framingCases` draws a
 * variant and a number. Requests aim at Session creation with a valid key and body, so that a request wrongly
 * read as valid changes state.
 */
import fc from 'fast-check'

export type FramingCase = {
  kind: string
  label: string
  /** Written in order on one connection. */
  chunks: Buffer[]
  /** Half-close the connection after writing (the client sends nothing more). */
  endAfterWrite: boolean
  [fc.toStringMethod]: () => string
}

export type FramingTarget = {
  /** The full-scope key. */
  key: string
  /** A path that creates something on POST (Session creation on an active Deployment). */
  createPath: string
  /** A valid JSON body for it. */
  createBody: string
}

type Variant = {
  kind: string
  label: string
  /** Range of the variant's number, and the number its example uses. */
  range: [number, number]
  example: number
  make: (n: number) => { chunks: string[]; endAfterWrite?: boolean }
}

const CRLF = '\r\n'
const KIB = 1024

/** Bytes from a seed (a small linear congruential generator: the same seed, the same bytes). */
function bytesFrom(seed: number, length: number, alphabet?: string): string {
  let x = seed >>> 0 || 1
  let out = ''
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    const v = x >>> 16
    out += alphabet ? alphabet[v % alphabet.length] : String.fromCharCode(v % 256)
  }
  return out
}

/** Every variant of malformed framing aimed at `t`. */
function variants(t: FramingTarget): Variant[] {
  const auth = `Authorization: Bearer ${t.key}`
  const head = (line: string, headers: string[]) =>
    [line, 'Host: 127.0.0.1', ...headers].join(CRLF) + CRLF + CRLF
  const get = (line = 'GET /v1/deployments HTTP/1.1', headers: string[] = []) =>
    head(line, [auth, ...headers])
  const body = t.createBody
  const length = Buffer.byteLength(body)
  const post = (headers: string[]) =>
    head(`POST ${t.createPath} HTTP/1.1`, [
      auth,
      `Idempotency-Key: ${NONCE}`,
      'Content-Type: application/json',
      ...headers,
    ])
  const fixed = (
    kind: string,
    label: string,
    chunks: string[],
    endAfterWrite = false,
  ): Variant => ({
    kind,
    label,
    range: [0, 0],
    example: 0,
    make: () => ({ chunks, endAfterWrite }),
  })
  const out: Variant[] = []

  const badLine = 'bad request line'
  for (const [label, text] of [
    ['not HTTP at all', `GARBAGE${CRLF}${CRLF}`],
    ['a method alone', `GET${CRLF}${CRLF}`],
    ['HTTP/9.9', `GET /v1/deployments HTTP/9.9${CRLF}Host: x${CRLF}${CRLF}`],
    ['a fourth part', `GET /v1/deployments HTTP/1.1 extra${CRLF}Host: x${CRLF}${CRLF}`],
    ['two spaces after the method', `GET  /v1/deployments HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`],
    ['a leading space', ` GET /v1/deployments HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`],
    ['no version (HTTP/0.9)', `GET /v1/deployments${CRLF}${CRLF}`],
    ['a space in the target', `GET /v1/dep loyments HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`],
    ['bare LF line ends', `GET /v1/deployments HTTP/1.1\nHost: x\n${auth}\n\n`],
    ['a NUL in the target', `GET /v1/deployments\u0000 HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`],
    ['the HTTP/2 preface', `PRI * HTTP/2.0${CRLF}${CRLF}SM${CRLF}${CRLF}`],
  ])
    out.push(fixed(badLine, label!, [text!]))
  out.push({
    kind: badLine,
    label: 'random bytes',
    range: [1, 2 ** 31 - 1],
    example: 42,
    make: (n) => ({ chunks: [bytesFrom(n, 1 + (n % 64)) + CRLF + CRLF] }),
  })

  const method = 'unknown method'
  for (const m of ['FOO', 'GETT', 'get', 'Post', 'BREW', 'PROPFIND', 'TRACE', 'M-SEARCH', 'QUERY'])
    out.push(fixed(method, m, [get(`${m} /v1/deployments HTTP/1.1`)]))
  out.push({
    kind: method,
    label: 'a random token',
    range: [1, 2 ** 31 - 1],
    example: 7,
    make: (n) => ({
      chunks: [
        get(
          `${bytesFrom(n, 1 + (n % 12), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ-')} /v1/deployments HTTP/1.1`,
        ),
      ],
    }),
  })

  const headers = 'headers over 16 KiB'
  out.push({
    kind: headers,
    label: 'one header value of n bytes',
    range: [16 * KIB, 80 * KIB],
    example: 17 * KIB,
    make: (n) => ({ chunks: [get(undefined, [`X-Big: ${'a'.repeat(n)}`])] }),
  })
  out.push({
    kind: headers,
    label: 'n bytes of 20-byte headers',
    range: [16 * KIB, 80 * KIB],
    example: 20 * KIB,
    make: (n) => ({
      chunks: [
        get(
          undefined,
          Array.from({ length: Math.ceil(n / 20) }, (_, i) => `X-H${i}: b`),
        ),
      ],
    }),
  })

  const url = 'URL over 16 KiB'
  out.push({
    kind: url,
    label: 'a query of n bytes',
    range: [16 * KIB, 80 * KIB],
    example: 17 * KIB,
    make: (n) => ({ chunks: [get(`GET /v1/deployments?q=${'a'.repeat(n)} HTTP/1.1`)] }),
  })
  out.push({
    kind: url,
    label: 'a path segment of n bytes',
    range: [16 * KIB, 80 * KIB],
    example: 17 * KIB,
    make: (n) => ({ chunks: [get(`GET /v1/deployments/${'a'.repeat(n)} HTTP/1.1`)] }),
  })

  const chunked = 'broken chunked encoding'
  const hex = (n: number) => n.toString(16)
  for (const [label, frame] of [
    ['an invalid chunk size', `ZZ${CRLF}${body}${CRLF}0${CRLF}${CRLF}`],
    ['a chunk size over 64 bits', `FFFFFFFFFFFFFFFFFFFF${CRLF}${body}${CRLF}0${CRLF}${CRLF}`],
    ['no CRLF after the chunk data', `${hex(length)}${CRLF}${body}0${CRLF}${CRLF}`],
    ['a chunk longer than its size', `1${CRLF}${body}${CRLF}0${CRLF}${CRLF}`],
    ['a negative chunk size', `-${hex(length)}${CRLF}${body}${CRLF}0${CRLF}${CRLF}`],
    ['a NUL in a chunk extension', `${hex(length)};\u0000${CRLF}${body}${CRLF}0${CRLF}${CRLF}`],
    ['no last chunk, then close', `${hex(length)}${CRLF}${body}${CRLF}`],
    ['a size larger than the data, then close', `${hex(length + 50)}${CRLF}${body}`],
  ])
    out.push(fixed(chunked, label!, [post(['Transfer-Encoding: chunked']), frame!], true))

  out.push({
    kind: 'Content-Length larger than the body',
    label: 'n bytes more announced than sent, then half-close',
    range: [1, 4096],
    example: 10,
    make: (n) => ({ chunks: [post([`Content-Length: ${length + n}`]), body], endAfterWrite: true }),
  })

  const stray = 'stray bytes after a complete request'
  for (const close of [false, true]) {
    for (const [label, after] of [
      ['"{}"', '{}'],
      ['text', 'garbage'],
      ['a request line', `GET /v1/deployments HTTP/1.1${CRLF}`],
      ['control bytes', '\u0000\u0001'],
    ]) {
      out.push(
        fixed(
          stray,
          `${label} after a Session creation${close ? ' with Connection: close' : ''}`,
          [
            post([`Content-Length: ${length}`, ...(close ? ['Connection: close'] : [])]),
            body + after,
          ],
          true,
        ),
      )
    }
  }

  const damage = 'damaged header block'
  const cl = `Content-Length: ${length}`
  for (const [label, lines] of [
    ['two different Content-Length', [cl, 'Content-Length: 1']],
    ['Content-Length and Transfer-Encoding', [cl, 'Transfer-Encoding: chunked']],
    ['Transfer-Encoding: gzip, chunked', ['Transfer-Encoding: gzip, chunked']],
    ['Transfer-Encoding: identity', ['Transfer-Encoding: identity', cl]],
    ['Content-Length: -1', ['Content-Length: -1']],
    ['Content-Length: abc', ['Content-Length: abc']],
    ['Content-Length: 1e3', ['Content-Length: 1e3']],
    ['a header line without colon', ['NoColonHere', cl]],
    ['a space before the colon', ['X-Space : 1', cl]],
    ['an obsolete folded header', ['X-Fold: a', ' b', cl]],
    ['a NUL in a header value', ['X-Nul: a\u0000b', cl]],
    ['a header name with a space', ['X Bad: 1', cl]],
  ] as [string, string[]][])
    out.push(fixed(damage, label, [post(lines), body], true))

  const odd = 'odd request form'
  for (const [label, text, close] of [
    ['HTTP/1.1 without Host', `GET /v1/deployments HTTP/1.1${CRLF}${auth}${CRLF}${CRLF}`],
    ['two Host headers', get(undefined, ['Host: other'])],
    ['an absolute-form target', get('GET http://127.0.0.1/v1/deployments HTTP/1.1')],
    ['an asterisk-form target', get('OPTIONS * HTTP/1.1')],
    ['an authority-form target', get('CONNECT 127.0.0.1:80 HTTP/1.1')],
    ['HTTP/1.0 without Host', `GET /v1/deployments HTTP/1.0${CRLF}${auth}${CRLF}${CRLF}`],
    ['a target without a leading slash', get('GET v1/deployments HTTP/1.1')],
    ['Expect: 100-continue and no body', post([cl, 'Expect: 100-continue']), true],
    [
      'Upgrade: websocket',
      get(undefined, [
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      ]),
    ],
  ] as [string, string, boolean?][])
    out.push(fixed(odd, label, [text], close ?? false))
  return out
}

/** Replaced by a fresh value in every case, so no two cases share an Idempotency-Key. */
const NONCE = 'framing-nonce-0000000000000000'

const show = (chunks: Buffer[]) =>
  chunks
    .map((c) => {
      const text = c.toString('latin1')
      return JSON.stringify(
        text.length > 400 ? `${text.slice(0, 300)}…(${text.length} bytes)` : text,
      )
    })
    .join(' + ')

function build(v: Variant, n: number, nonce: string): FramingCase {
  const { chunks, endAfterWrite = false } = v.make(n)
  const bytes = chunks.map((c) => Buffer.from(c.replace(NONCE, `framing-${nonce}`), 'latin1'))
  const label = v.range[1] > v.range[0] ? `${v.label} (n = ${n})` : v.label
  return {
    kind: v.kind,
    label,
    chunks: bytes,
    endAfterWrite,
    [fc.toStringMethod]: () =>
      `${v.kind}: ${label}\n  ${show(bytes)}${endAfterWrite ? '\n  then half-close' : ''}`,
  }
}

/** Every variant once, with its typical number. */
export const framingExamples = (t: FramingTarget): FramingCase[] =>
  variants(t).map((v, i) => build(v, v.example, `example-${String(i).padStart(3, '0')}`))

/** A variant and a number drawn from its range. */
export function framingCases(t: FramingTarget): fc.Arbitrary<FramingCase> {
  return fc
    .tuple(
      fc.constantFrom(...variants(t)),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 16, maxLength: 16 }),
    )
    .chain(([v, nonce]) =>
      fc.integer({ min: v.range[0], max: v.range[1] }).map((n) => build(v, n, nonce)),
    )
}
