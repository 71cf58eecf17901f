/**
 * One webhook send (Webhook notifications 9-10): resolve the host again (every address must be public unless
 * --allow-insecure-webhooks), POST to exactly the address that was checked, verify the certificate, never follow
 * a redirect, give up after 20 seconds including DNS (real time: this is I/O, not the virtual clock), and keep
 * only the numeric status and a fixed error code: the receiver's body is drained and dropped (WHN-028). A mock
 * instance's sends reuse kept-alive connections (connections.ts); a reused connection the receiver closed
 * before answering is retried once on a fresh one (sendNotification), never counted as a failed attempt.
 */
import { lookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https'
import { isIP, type LookupFunction, type Socket } from 'node:net'
import { urlToHttpOptions } from 'node:url'
import { rootCertificates } from 'node:tls'
import type { PinnedRequest, WebhookConnections } from './connections.js'
import { wallTimeout } from '../clock/wall-timeout.js'
import { bareHost, isPublicAddress, refusedHostName } from './network-rules.js'

/** Limits > Time limits: one send takes at most 20 seconds including DNS (WHN-027). */
export const SEND_TIMEOUT_MS = 20_000

/** The fixed error codes of a failed attempt (the delivery history keeps one of these, never a body). */
export type AttemptErrorCode =
  | 'HTTP_STATUS' // answered, but not 2xx
  | 'REDIRECT' // answered 3xx: not followed (WHN-025)
  | 'TIMEOUT' // no answer within 20 s, DNS included
  | 'DNS_ERROR' // the name did not resolve
  | 'ADDRESS_REFUSED' // scheme, name or a resolved address breaks the network rules
  | 'TLS_ERROR' // certificate verification or handshake failed
  | 'CONNECTION_ERROR' // refused, reset or otherwise failed before an answer
  | 'BODY_TOO_LARGE' // the notification would exceed 4 KiB (not sent)
  | 'INTERRUPTED' // the mock stopped during the last attempt; its outcome is unknown

export type AttemptOutcome = {
  ok: boolean
  httpStatus: number | null
  errorCode: AttemptErrorCode | null
}

export type SendInput = {
  url: string
  body: Uint8Array
  headers: Record<string, string>
  allowInsecure: boolean
  /**
   * PEM certificates trusted beside the default root CAs (--webhook-ca): a local HTTPS receiver's own CA or
   * self-signed certificate. The certificate is still verified, its host name included.
   */
  trustedCa?: string
  timeoutMs?: number
  /** Aborts the send early (the mock resets or closes); the outcome then reads TIMEOUT and is not recorded. */
  signal?: AbortSignal
  /** The instance's kept-alive connections (connections.ts); without them every send opens its own. */
  connections?: WebhookConnections
}

const failure = (
  errorCode: AttemptErrorCode,
  httpStatus: number | null = null,
): AttemptOutcome => ({
  ok: false,
  httpStatus,
  errorCode,
})

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_OSSL)/

/** Classifies a request error into a fixed code. */
function errorCodeOf(error: unknown, limit: SendLimit): AttemptErrorCode {
  if (limit.expired) return 'TIMEOUT'
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && TLS_CODES.test(code)) return 'TLS_ERROR'
  return 'CONNECTION_ERROR'
}

/** Resolves a host name under the deadline: every address, each checked unless insecure. */
async function resolveName(
  host: string,
  allowInsecure: boolean,
  limit: SendLimit,
): Promise<Pin | AttemptOutcome> {
  if (!allowInsecure && refusedHostName(host)) return failure('ADDRESS_REFUSED')
  let addresses: { address: string; family: number }[]
  try {
    addresses = await raceAbort(lookup(host, { all: true, verbatim: true }), limit)
  } catch {
    return failure(limit.expired ? 'TIMEOUT' : 'DNS_ERROR')
  }
  if (addresses.length === 0) return failure('DNS_ERROR')
  if (!allowInsecure && !addresses.every((a) => isPublicAddress(a.address))) {
    return failure('ADDRESS_REFUSED')
  }
  return pinTo(addresses)
}

function raceAbort<T>(promise: Promise<T>, limit: SendLimit): Promise<T> {
  if (limit.expired) return Promise.reject(new Error('aborted'))
  return new Promise<T>((resolve, reject) => {
    const onExpire = () => reject(new Error('aborted'))
    limit.watch(onExpire)
    promise.then(
      (v) => {
        limit.unwatch(onExpire)
        resolve(v)
      },
      (e: unknown) => {
        limit.unwatch(onExpire)
        reject(e instanceof Error ? e : new Error(String(e)))
      },
    )
  })
}

/**
 * The send limit (WHN-027) and the caller's abort (reset, close) as one flag and one watcher: the step under
 * way (the DNS lookup, then each request in turn) watches it and gives up when it expires. One plain wall timer
 * per send and no AbortController of its own: AbortSignal.timeout with AbortSignal.any, and http's `signal`
 * option, cost every send weak references, finalizers and end-of-stream watchers. The caller's signal may be
 * shared by many sends (the pool's, one per reset): once the send is over and no step watches any more (a
 * request is watched until it closes, its answer drained), the timer is cleared and the abort listener removed.
 */
class SendLimit {
  expired = false
  private watcher: (() => void) | undefined
  private finished = false
  private readonly cancelTimer: () => void

  constructor(
    ms: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.cancelTimer = wallTimeout(ms, () => this.handleEvent())
    if (outer?.aborted) this.handleEvent()
    else outer?.addEventListener('abort', this, { once: true })
  }

  /** The limit expired or the caller aborted (the abort listener is the limit itself: no function per send). */
  handleEvent(): void {
    if (this.expired) return
    this.expired = true
    this.watcher?.()
  }

  /** The step under way: fn runs (once) if the limit expires while it watches. */
  watch(fn: () => void): void {
    this.watcher = fn
    if (this.expired) fn()
  }

  /** The step is over; a later step's watcher is left alone. */
  unwatch(fn: () => void): void {
    if (this.watcher === fn) this.watcher = undefined
    this.release()
  }

  /** The send has its outcome; the limit stays on a request still draining its answer until that closes. */
  finish(): void {
    this.finished = true
    this.release()
  }

  private release(): void {
    if (!this.finished || this.watcher) return
    this.cancelTimer()
    this.outer?.removeEventListener('abort', this)
  }
}

/** Sends one notification and reports the outcome; never throws. */
export async function sendNotification(input: SendInput): Promise<AttemptOutcome> {
  const limit = new SendLimit(input.timeoutMs ?? SEND_TIMEOUT_MS, input.signal)
  try {
    return await send(input, limit)
  } finally {
    limit.finish()
  }
}

/**
 * What a send needs of an endpoint address, parsed once per address text (a pure function of it: the DNS
 * lookup and every check that depends on the send's options stay per send): the request options of the URL,
 * its normalised host, and for an IP literal the one address it pins.
 */
export type SendTarget =
  | { valid: false }
  | {
      valid: true
      /** 'http:' or 'https:'; any other scheme is refused. */
      protocol: string
      /** The URL's request options (host name, port, path, login details), as http.request(url) takes them. */
      base: HttpsRequestOptions
      /** The host as the network rules see it (normaliseHost). */
      host: string
      /** An IP literal host: its pin, and whether the address is public. A name is resolved per send. */
      literal: { pin: Pin; public: boolean } | undefined
    }

/** Parses an endpoint address for sending (see SendTarget). */
export function parseTarget(text: string): SendTarget {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { valid: false }
  }
  const host = bareHost(url)
  const family = isIP(host)
  return {
    valid: true,
    protocol: url.protocol,
    base: requestTarget(url),
    host,
    literal:
      family === 0
        ? undefined
        : { pin: pinTo([{ address: host, family }]), public: isPublicAddress(host) },
  }
}

/**
 * The fields of http.request(url)'s URL options that a request reads (scheme, host name, port, path, login
 * details), without the ones it ignores (href, hash, search, pathname): Node copies the options object twice
 * per request, so each field left out is copied less.
 */
function requestTarget(url: URL): HttpsRequestOptions {
  const { protocol, hostname, port, path, auth } = urlToHttpOptions(url)
  const target: HttpsRequestOptions = { protocol, hostname, path }
  if (port !== undefined) target.port = port
  if (auth !== undefined) target.auth = auth
  return target
}

/**
 * The checked addresses a send connects to: the lookup that hands them to the socket (no second, unchecked
 * resolution) and the pool key naming them (connections.ts).
 */
type Pin = { lookup: LookupFunction; key: string }

function pinTo(addresses: { address: string; family: number }[]): Pin {
  return {
    lookup: (_hostname, options, callback) => {
      if (options.all) callback(null, addresses)
      else callback(null, addresses[0]!.address, addresses[0]!.family)
    },
    key: addresses.map((a) => `${a.address}/${a.family}`).join(','),
  }
}

async function send(input: SendInput, limit: SendLimit): Promise<AttemptOutcome> {
  const target = input.connections ? input.connections.target(input.url) : parseTarget(input.url)
  if (!target.valid) return failure('ADDRESS_REFUSED')
  const https = target.protocol === 'https:'
  if (!https && !(input.allowInsecure && target.protocol === 'http:'))
    return failure('ADDRESS_REFUSED')
  let pin: Pin
  if (target.literal) {
    if (!input.allowInsecure && !target.literal.public) return failure('ADDRESS_REFUSED')
    pin = target.literal.pin
  } else {
    const resolved = await resolveName(target.host, input.allowInsecure, limit)
    if ('ok' in resolved) return resolved
    pin = resolved
  }
  // Fixed fields first, then the URL's: Node 20 builds a literal that starts with a spread on a slow path.
  const options: RequestOptions = Object.assign(
    {
      method: 'POST',
      headers: Object.assign({}, input.headers, {
        'Content-Length': String(input.body.byteLength),
      }),
      // Connect to exactly the addresses that were checked (no second, unchecked resolution).
      lookup: pin.lookup,
      // WHN-024: certificate verification is never switched off; a failure is TLS_ERROR.
      rejectUnauthorized: true,
    },
    target.base,
    https && input.trustedCa ? { ca: [...rootCertificates, input.trustedCa] } : undefined,
  )
  if (!input.connections) return postFresh(https, options, input.body, limit)
  // The pool key: a kept-alive connection is reused only for this same set of checked addresses.
  options.agent = input.connections.agentFor(https)
  options.pinnedAddresses = pin.key
  const pooled = await post(https, options, input.body, limit)
  if (pooled !== STALE) return pooled
  // The kept-alive connection the send picked was closed by the receiver (it had been idle, and the receiver
  // closed it as the request went out) before a single byte of an answer came back. That is a race of
  // connection reuse, not the attempt's outcome: the request goes once more, on a fresh connection of its own,
  // and that one's outcome is the attempt's (as undici and browsers do). The receiver never answered the
  // first try; should it have read it, the same signed notice arrives twice, which a receiver deduplicates by
  // event_id (WHN-014). The 20-second limit (WHN-027) covers both tries: they share one SendLimit.
  return postFresh(https, options, input.body, limit)
}

/** post() on a connection of its own (agent: false): never a reused one, so never STALE. */
async function postFresh(
  https: boolean,
  options: RequestOptions,
  body: Uint8Array,
  limit: SendLimit,
): Promise<AttemptOutcome> {
  const o = await post(https, Object.assign({}, options, { agent: false }), body, limit)
  return o === STALE ? failure('CONNECTION_ERROR') : o
}

/** What post() answers when a reused connection failed before any byte of an answer: try again, fresh. */
const STALE = Symbol('stale kept-alive connection')

type RequestOptions = HttpsRequestOptions & PinnedRequest

/**
 * One POST over one connection (new, or a kept-alive one from the agent). Settles on the status line; the
 * body is drained, never read (WHN-028). STALE only when the connection was a reused one and it failed
 * before any byte of an answer arrived on it.
 */
function post(
  https: boolean,
  options: RequestOptions,
  body: Uint8Array,
  limit: SendLimit,
): Promise<AttemptOutcome | typeof STALE> {
  const send = https ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    let settled = false
    // Any byte read on the connection while this request holds it (a partial answer counts): the socket's
    // byte count against its count when the request got it, no listener on the socket per request.
    let answered = false
    let socket: Socket | undefined
    let readBefore = 0
    const settle = (o: AttemptOutcome | typeof STALE) => {
      if (settled) return
      settled = true
      resolve(o)
    }
    const req = send(options, (res: IncomingMessage) => {
      answered = true
      const status = res.statusCode ?? 0
      // The body is never read into the history (WHN-028); drain it so the connection is free again.
      res.resume()
      res.on('error', () => undefined)
      if (status >= 200 && status < 300) settle({ ok: true, httpStatus: status, errorCode: null })
      else if (status >= 300 && status < 400) settle(failure('REDIRECT', status))
      else settle(failure('HTTP_STATUS', status))
    })
    // The send limit or the caller's abort (WHN-027): the request is destroyed, its error reads TIMEOUT. It
    // is watched until the request closes (after the answer's body was drained), not just until the answer.
    const onExpire = () => req.destroy(new Error('send aborted'))
    limit.watch(onExpire)
    req.once('close', () => limit.unwatch(onExpire))
    req.on('socket', (s) => {
      socket = s
      readBefore = s.bytesRead
    })
    req.on('error', (error) => {
      if (socket && socket.bytesRead > readBefore) answered = true
      if (req.reusedSocket && !answered && !limit.expired) settle(STALE)
      else settle(failure(errorCodeOf(error, limit)))
    })
    req.end(body)
  })
}
