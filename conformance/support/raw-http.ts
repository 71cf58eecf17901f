/**
 * HTTP without a client library's help, for the robustness tests.
 *   sendRaw(baseUrl, request)      exactly the given method, request target, headers and body bytes on a fresh
 *                                  connection (node:http: no redirects, no body encoding, no default
 *                                  Content-Type); an event stream is closed once its head has arrived.
 *   exchangeBytes(baseUrl, bytes)  arbitrary bytes on a TCP socket (node:net), and whatever comes back.
 *   parseResponses(bytes)          the HTTP/1.1 responses in received bytes, and what could not be parsed.
 */
import { request as httpRequest, type Agent } from 'node:http'
import { connect } from 'node:net'
import type { CheckedResponse } from '../checks/types.js'

export type RawRequest = {
  method: string
  /** The request target as sent: path and query, already encoded (bytes 0x21-0xFF only). */
  target: string
  headers: Record<string, string | string[]>
  body?: Buffer
  /** Send the body with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean
}

export type RawResponse = CheckedResponse & { bodyBytes: Buffer }

const MAX_BODY = 4 * 1024 * 1024

const isJsonType = (contentType: string | undefined) =>
  /^application\/(.+\+)?json/i.test(contentType ?? '')

/** A response as the suite's checks take it: JSON bodies parsed (undefined when unparsable), text kept. */
export function toChecked(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  bodyBytes: Buffer,
): RawResponse {
  const text = bodyBytes.toString('utf8')
  let body: unknown
  if (isJsonType(headers['content-type'] as string | undefined)) {
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
  }
  return { status, headers, body, text, bodyBytes }
}

/** Sends one request (on a fresh connection by default); rejects when no response head arrives. */
export function sendRaw(
  baseUrl: string,
  req: RawRequest,
  opts: {
    timeoutMs?: number
    /** A keep-alive agent for well-formed reads; default a fresh connection. */ agent?: Agent
  } = {},
): Promise<RawResponse> {
  const url = new URL(baseUrl)
  const headers: Record<string, string | string[]> = { ...req.headers }
  if (req.body !== undefined) {
    // node:http frames a body of a GET or DELETE only when told how.
    if (req.chunked) headers['Transfer-Encoding'] = 'chunked'
    else headers['Content-Length'] = String(req.body.length)
  }
  return new Promise((resolve, reject) => {
    let answered = false
    const timer = setTimeout(() => {
      outgoing.destroy(new Error(`no answer within ${opts.timeoutMs ?? 15_000} ms`))
    }, opts.timeoutMs ?? 15_000)
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.target,
        headers,
        agent: opts.agent ?? false,
      },
      (res) => {
        answered = true
        const chunks: Buffer[] = []
        let size = 0
        const done = () => {
          clearTimeout(timer)
          resolve(toChecked(res.statusCode ?? 0, res.headers, Buffer.concat(chunks)))
        }
        if (/^text\/event-stream/i.test(res.headers['content-type'] ?? '')) {
          // A stream stays open: its head is the answer; the body is the events tests' business.
          res.destroy()
          return done()
        }
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size <= MAX_BODY) chunks.push(chunk)
        })
        res.on('end', done)
        res.on('error', done)
        res.on('aborted', done)
      },
    )
    outgoing.on('error', (error) => {
      if (answered) return
      clearTimeout(timer)
      reject(error)
    })
    if (req.body !== undefined) {
      if (req.chunked) {
        // Two writes, so the body goes out in more than one chunk.
        const half = Math.floor(req.body.length / 2)
        outgoing.write(req.body.subarray(0, half))
        outgoing.end(req.body.subarray(half))
      } else outgoing.end(req.body)
    } else outgoing.end()
  })
}

export type Exchange = {
  /** Everything the server sent. */
  received: Buffer
  /** The server closed (or reset) the connection. */
  closed: boolean
}

/**
 * Writes `chunks` on a fresh TCP connection, optionally half-closing afterwards, and collects the answer until
 * the server closes, or `settleMs` after a complete response, or `timeoutMs` in all.
 */
export function exchangeBytes(
  baseUrl: string,
  chunks: readonly Buffer[],
  opts: { endAfterWrite?: boolean; settleMs?: number; timeoutMs?: number } = {},
): Promise<Exchange> {
  const url = new URL(baseUrl)
  return new Promise((resolve) => {
    const received: Buffer[] = []
    let finished = false
    let settle: NodeJS.Timeout | undefined
    const finish = (closed: boolean) => {
      if (finished) return
      finished = true
      clearTimeout(total)
      clearTimeout(settle)
      socket.destroy()
      resolve({ received: Buffer.concat(received), closed })
    }
    const total = setTimeout(() => finish(false), opts.timeoutMs ?? 3000)
    const socket = connect(Number(url.port), url.hostname)
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk)
      if (parseResponses(Buffer.concat(received)).responses.length > 0) {
        clearTimeout(settle)
        settle = setTimeout(() => finish(false), opts.settleMs ?? 150)
      }
    })
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('error', () => finish(true))
    socket.on('connect', () => {
      for (const chunk of chunks) socket.write(chunk)
      if (opts.endAfterWrite) socket.end()
    })
  })
}

export type ParsedResponse = {
  statusLine: string
  status: number
  headers: Record<string, string>
  /** Header lines that are not `name: value`. */
  malformedHeaders: string[]
  body: Buffer
}

/**
 * The complete HTTP/1.1 responses at the start of `bytes` (interim 1xx ones included; Content-Length or chunked
 * bodies; a response without either runs to the end of the bytes), and the bytes after them that do not form
 * one.
 */
export function parseResponses(bytes: Buffer): { responses: ParsedResponse[]; rest: Buffer } {
  const responses: ParsedResponse[] = []
  let at = 0
  while (at < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', at)
    if (headEnd < 0) break
    const [statusLine = '', ...lines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n')
    const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine)
    if (!match) break
    const headers: Record<string, string> = {}
    const malformedHeaders: string[] = []
    for (const line of lines) {
      const colon = line.indexOf(':')
      if (colon <= 0) {
        malformedHeaders.push(line)
        continue
      }
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim()
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value
    }
    const bodyStart = headEnd + 4
    let body: Buffer
    let next: number
    const status = Number(match[1])
    if ((status >= 100 && status < 200) || status === 204 || status === 304) {
      body = Buffer.alloc(0)
      next = bodyStart
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const decoded = decodeChunked(bytes, bodyStart)
      if (!decoded) break
      body = decoded.body
      next = decoded.end
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length'])
      if (!Number.isInteger(length) || bodyStart + length > bytes.length) break
      body = bytes.subarray(bodyStart, bodyStart + length)
      next = bodyStart + length
    } else {
      body = bytes.subarray(bodyStart)
      next = bytes.length
    }
    responses.push({ statusLine, status, headers, malformedHeaders, body })
    at = next
  }
  return { responses, rest: bytes.subarray(at) }
}

function decodeChunked(bytes: Buffer, start: number): { body: Buffer; end: number } | undefined {
  const parts: Buffer[] = []
  let at = start
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at)
    if (lineEnd < 0) return undefined
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16)
    if (!Number.isFinite(size)) return undefined
    at = lineEnd + 2
    if (size === 0) {
      const trailerEnd = bytes.indexOf('\r\n\r\n', lineEnd)
      if (trailerEnd >= 0) return { body: Buffer.concat(parts), end: trailerEnd + 4 }
      return bytes.indexOf('\r\n', at) === at
        ? { body: Buffer.concat(parts), end: at + 2 }
        : undefined
    }
    if (at + size + 2 > bytes.length) return undefined
    parts.push(bytes.subarray(at, at + size))
    at += size + 2
  }
}
