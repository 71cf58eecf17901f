/**
 * The message Node parsed, for a request served over HTTP (mock/server.ts gives the app the IncomingMessage as
 * c.env.incoming), and the request headers read from it. In process (app.request, fetch) there is none, and
 * Hono's request answers.
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'

/** What the mock reads of the message Node parsed: its headers, lower-cased and as received. */
type NodeRequest = { headers: Record<string, unknown>; rawHeaders: string[] }

/** The message Node parsed, for a request served over HTTP (mock/server.ts gives the app c.env.incoming). */
const nodeRequest = (c: Context<Env>): NodeRequest | undefined =>
  (c.env as { incoming?: NodeRequest } | undefined)?.incoming

const httpWhitespace = (code: number) => code === 9 || code === 10 || code === 13 || code === 32

/** The value without leading and trailing HTTP whitespace (tab, LF, CR, space), as the Fetch standard trims. */
function trimHttp(v: string): string {
  if (!httpWhitespace(v.charCodeAt(0)) && !httpWhitespace(v.charCodeAt(v.length - 1))) return v
  let start = 0
  let end = v.length
  while (start < end && httpWhitespace(v.charCodeAt(start))) start++
  while (end > start && httpWhitespace(v.charCodeAt(end - 1))) end--
  return v.slice(start, end)
}

/**
 * Names whose repeats Node's headers object drops (it keeps the first line): for these @hono/node-server joins
 * the raw lines, each trimmed; for any other name it takes Node's joined value (lines joined with ", ") and
 * trims the whole.
 */
const KEPT_ONCE_BY_NODE = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
])

/**
 * A request header's value, exactly as `c.req.header(name)` gives it (`lowerName` in lower case); undefined
 * when absent. Over HTTP it is read from the headers Node parsed: @hono/node-server checks the name's syntax
 * and the value with regular expressions on every lookup, and a request reads several headers, some twice. A
 * value the adapter would refuse (a NUL, CR or LF: Node's parser lets none through) is left to it.
 */
export function headerOf(c: Context<Env>, lowerName: string): string | undefined {
  const incoming = nodeRequest(c)
  if (!incoming) return c.req.header(lowerName)
  let value: string | undefined
  if (KEPT_ONCE_BY_NODE.has(lowerName)) {
    const raw = incoming.rawHeaders
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!
      if (
        name.length !== lowerName.length ||
        (name !== lowerName && name.toLowerCase() !== lowerName)
      )
        continue
      const v = trimHttp(raw[i + 1]!)
      value = value === undefined ? v : `${value}, ${v}`
    }
  } else {
    const joined = incoming.headers[lowerName]
    if (typeof joined === 'string') value = trimHttp(joined)
  }
  if (value !== undefined && /[\0\r\n]/.test(value)) return c.req.header(lowerName)
  return value
}

/** Whether Node framed the request (served over HTTP). */
export const framedByNode = (c: Context<Env>): boolean => nodeRequest(c) !== undefined

/**
 * A query parameter's value, exactly as `c.req.query(name)` gives it; undefined at once for a URL with no
 * query string (Hono looks a parameter up in the URL text by name, building its search strings each time, and
 * a request looks up several: delegated access, the referee's and the journal's cursor, the operation's own).
 */
export function queryOf(c: Context<Env>, name: string): string | undefined {
  return c.req.url.includes('?') ? c.req.query(name) : undefined
}
