/**
 * What the suite sent and what it got back, for failure reports: the client records each exchange (secrets
 * masked as it records, so nothing unmasked is ever kept), setup.ts attaches the last ones to a failing test's
 * meta, and the requirements reporter prints them as curl commands and HAR 1.2 entries. Also the contract
 * tally: how many responses of each documented operation the test saw (for the per-operation summary).
 * Vitest gives each test file its own module scope, so this holds the current file's test.
 */

export type Exchange = {
  startedAt: string
  ms: number
  request: { method: string; url: string; headers: Record<string, string>; body?: string }
  response: { status: number; headers: Record<string, string>; body: string }
}

/** Per operation (or "undocumented"): responses seen, by status. */
export type OperationTally = Record<string, Record<string, number>>

/** Exchanges kept per test (the last ones: what led to the failure). */
export const KEPT_EXCHANGES = 6
/** Body text kept per request or response. */
const BODY_LIMIT = 4096

const recent: Exchange[] = []
let tally: OperationTally = {}

/** Header names whose values are credentials. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie'])
/** JSON fields and query parameters whose values are credentials. */
const SECRET_FIELDS =
  /^(secret|signing_secret|new_secret|token|owner_token|api_key|password|download_token)$/i

/** A credential shown by its first characters only. */
export const maskValue = (value: string): string =>
  value.length <= 8 ? '****' : `${value.slice(0, Math.min(8, Math.floor(value.length / 4)))}****`

const maskHeader = (name: string, value: string): string => {
  if (!SECRET_HEADERS.has(name.toLowerCase())) return value
  const bearer = /^Bearer\s+(.*)$/i.exec(value)
  return bearer ? `Bearer ${maskValue(bearer[1]!)}` : maskValue(value)
}

/** A JSON text with credential fields masked (other text: as it is, credential-looking tokens masked). */
export function maskBody(text: string): string {
  try {
    const walk = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(walk)
      if (v && typeof v === 'object')
        return Object.fromEntries(
          Object.entries(v).map(([k, x]) => [
            k,
            SECRET_FIELDS.test(k) && typeof x === 'string' ? maskValue(x) : walk(x),
          ]),
        )
      return v
    }
    return JSON.stringify(walk(JSON.parse(text)))
  } catch {
    return text.replace(/\b(sk_[A-Za-z0-9_]{4})[A-Za-z0-9_]+/g, '$1****')
  }
}

/** A URL with credential query parameters masked. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url)
    for (const [k, v] of [...u.searchParams])
      if (SECRET_FIELDS.test(k)) u.searchParams.set(k, maskValue(v))
    return u.toString()
  } catch {
    return url
  }
}

const clip = (text: string): string =>
  text.length > BODY_LIMIT ? `${text.slice(0, BODY_LIMIT)}… (${text.length} characters)` : text

/** Records one exchange (masked). */
export function recordExchange(e: Exchange): void {
  recent.push({
    ...e,
    request: {
      method: e.request.method,
      url: maskUrl(e.request.url),
      headers: Object.fromEntries(
        Object.entries(e.request.headers).map(([k, v]) => [k, maskHeader(k, v)]),
      ),
      ...(e.request.body === undefined ? {} : { body: clip(maskBody(e.request.body)) }),
    },
    response: {
      status: e.response.status,
      headers: Object.fromEntries(
        Object.entries(e.response.headers).map(([k, v]) => [k, maskHeader(k, String(v))]),
      ),
      body: clip(maskBody(e.response.body)),
    },
  })
  if (recent.length > KEPT_EXCHANGES) recent.shift()
}

/** Counts a checked response of an operation. */
export function tallyResponse(operation: string | undefined, status: number): void {
  const op = operation ?? 'undocumented'
  const byStatus = (tally[op] ??= {})
  byStatus[status] = (byStatus[status] ?? 0) + 1
}

/** The exchanges and the tally of the current test, and a fresh start for the next. */
export function takeTestRecord(): { exchanges: Exchange[]; tally: OperationTally } {
  const record = { exchanges: [...recent], tally }
  recent.length = 0
  tally = {}
  return record
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/** The exchange's request as a curl command (masked credentials stay masked: fill them in to replay). */
export function toCurl(e: Exchange): string {
  const parts = ['curl', '-i', '-X', e.request.method, shellQuote(e.request.url)]
  for (const [k, v] of Object.entries(e.request.headers)) parts.push('-H', shellQuote(`${k}: ${v}`))
  if (e.request.body !== undefined) parts.push('--data-binary', shellQuote(e.request.body))
  return parts.join(' ')
}

/** A HAR 1.2 entry of the exchange. */
export function toHarEntry(e: Exchange): Record<string, unknown> {
  const headers = (h: Record<string, string>) =>
    Object.entries(h).map(([name, value]) => ({ name, value: String(value) }))
  const queryString = URL.canParse(e.request.url)
    ? [...new URL(e.request.url).searchParams].map(([name, value]) => ({ name, value }))
    : []
  const contentType = (h: Record<string, string>) =>
    Object.entries(h).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? ''
  return {
    startedDateTime: e.startedAt,
    time: e.ms,
    request: {
      method: e.request.method,
      url: e.request.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headers(e.request.headers),
      queryString,
      ...(e.request.body === undefined
        ? {}
        : { postData: { mimeType: contentType(e.request.headers), text: e.request.body } }),
      headersSize: -1,
      bodySize: e.request.body === undefined ? 0 : Buffer.byteLength(e.request.body),
    },
    response: {
      status: e.response.status,
      statusText: '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headers(e.response.headers),
      content: {
        size: Buffer.byteLength(e.response.body),
        mimeType: contentType(e.response.headers),
        text: e.response.body,
      },
      redirectURL: '',
      headersSize: -1,
      bodySize: Buffer.byteLength(e.response.body),
    },
    cache: {},
    timings: { send: 0, wait: e.ms, receive: 0 },
  }
}

/** A HAR 1.2 document of exchanges. */
export const toHar = (entries: readonly Exchange[]): Record<string, unknown> => ({
  log: {
    version: '1.2',
    creator: { name: 'ai-employee-mock conformance', version: '1' },
    entries: entries.map(toHarEntry),
  },
})
