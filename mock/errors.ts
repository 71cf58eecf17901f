/**
 * ApiError, the one way to answer an HTTP error, and errorResponse(), the only code that writes the error
 * envelope {error:{code,message,retryable,request_id,details}}. Status and retryable come from the catalog.
 */
import type { Context } from 'hono'
import { ERROR_CATALOG, type HttpErrorCode, type StatusFor } from '../spec/index.js'
import type { Env } from './deps.js'
import { futureCode } from './domain/forward-compat.js'
import { answer, answerHeader } from './util/answer.js'

export type ErrorDetails = Record<string, unknown>

export type ApiErrorOptions<C extends HttpErrorCode> = {
  /** Required when the catalog allows several statuses for the code (INVALID_INPUT, HTTP_ERROR). */
  status?: StatusFor<C>
  message?: string
  details?: ErrorDetails
  /** Seconds for Retry-After (default 1 when the catalog requires the header). */
  retryAfterS?: number
}

type IsUnion<T, U = T> = T extends unknown ? ([U] extends [T] ? false : true) : never
/** The options argument: mandatory with a status when the code has several statuses. */
type OptionsArg<C extends HttpErrorCode> =
  IsUnion<StatusFor<C>> extends true
    ? [opts: ApiErrorOptions<C> & { status: StatusFor<C> }]
    : [opts?: ApiErrorOptions<C>]

type HttpEntry = { status: readonly number[]; retryable: boolean; retry_after?: boolean | 'maybe' }
const httpOf = (code: HttpErrorCode): HttpEntry => (ERROR_CATALOG[code] as { http: HttpEntry }).http

/**
 * An HTTP error answer by catalog code. Throw it from any handler or middleware; app.onError renders it.
 * @example throw new ApiError('INVALID_INPUT', { status: 422, details: { errors } })
 */
export class ApiError<C extends HttpErrorCode = HttpErrorCode> extends Error {
  readonly code: C
  readonly status: number
  readonly retryable: boolean
  readonly details: ErrorDetails
  readonly retryAfterS: number | undefined

  constructor(code: C, ...[opts]: OptionsArg<C>) {
    const o: ApiErrorOptions<C> = opts ?? {}
    // An ApiError is an answer, not a fault: it captures no stack trace (the mock never logs one for it).
    const traceLimit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(o.message ?? ERROR_CATALOG[code].meaning)
    Error.stackTraceLimit = traceLimit
    this.name = 'ApiError'
    const http = httpOf(code)
    const status =
      (o.status as number | undefined) ?? (http.status.length === 1 ? http.status[0] : undefined)
    if (status === undefined || !http.status.includes(status)) {
      throw new Error(
        `ApiError(${code}) needs a status among ${http.status.join(', ')}, got ${String(o.status)}`,
      )
    }
    this.code = code
    this.status = status
    this.retryable = http.retryable
    this.details = o.details ?? {}
    this.retryAfterS = o.retryAfterS
  }
}

/**
 * An ApiError for a code known only at run time (e.g. the code a rule function returned): the code must have
 * one status in the catalog, which the constructor checks.
 */
export function apiErrorOf(
  code: HttpErrorCode,
  opts: Omit<ApiErrorOptions<HttpErrorCode>, 'status'> = {},
): ApiError {
  return new ApiError(code as 'NOT_FOUND', opts)
}

/** The error envelope as sent. */
export type ErrorEnvelope = {
  error: {
    code: string
    message: string
    retryable: boolean
    request_id: string
    details: ErrorDetails
  }
}

/** The envelope of an ApiError for one request: the only place the envelope's fields are put together. */
export function errorEnvelope(apiError: ApiError, requestId: string): ErrorEnvelope {
  return {
    error: {
      code: apiError.code,
      message: apiError.message,
      retryable: apiError.retryable,
      request_id: requestId,
      details: apiError.details,
    },
  }
}

/** Whether reading the request failed because the client closed the connection. */
function clientWentAway(c: Context<Env>, err: unknown): boolean {
  return c.req.raw.signal?.aborted === true || (err as { code?: unknown })?.code === 'ECONNRESET'
}

/**
 * Renders any thrown value as the error envelope. An ApiError keeps its code; anything else is logged
 * (with its stack, server side only) and answered INTERNAL_ERROR 500.
 */
export function errorResponse(c: Context<Env>, err: unknown): Response {
  const deps = c.var.deps
  let requestId = c.var.requestId
  if (!requestId) {
    requestId = deps.ids.requestId()
    c.set('requestId', requestId)
  }
  let apiError: ApiError
  if (err instanceof ApiError) {
    apiError = err
  } else if (clientWentAway(c, err)) {
    // The client closed the connection mid-request: nobody receives an answer; one line, no stack.
    deps.log.info('client aborted', { request_id: requestId, method: c.req.method })
    apiError = new ApiError('INVALID_INPUT', { status: 400, message: 'The request was aborted.' })
  } else {
    deps.log.error('unhandled error', {
      request_id: requestId,
      method: c.req.method,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    })
    apiError = new ApiError('INTERNAL_ERROR')
  }
  const body = errorEnvelope(apiError, requestId)
  // Forward-compatibility rehearsal: a retryable 429 or 503 carries an unknown code, status, retryable,
  // Retry-After and details unchanged (mock/domain/forward-compat.ts).
  if (
    deps.forwardCompat?.enabled &&
    apiError.retryable &&
    (apiError.status === 429 || apiError.status === 503)
  )
    body.error.code = futureCode(apiError.status)
  c.set('answeredError', { code: body.error.code, retryable: apiError.retryable })
  answerHeader(c, 'X-Request-Id', requestId)
  answerHeader(c, 'Cache-Control', 'no-store')
  // A 413 is answered before the body is read: the rest of it cannot be framed, so the connection ends.
  if (apiError.status === 413) answerHeader(c, 'Connection', 'close')
  const retryAfter = httpOf(apiError.code).retry_after
  if (retryAfter === true || (retryAfter === 'maybe' && apiError.retryAfterS !== undefined)) {
    answerHeader(c, 'Retry-After', String(Math.max(1, Math.ceil(apiError.retryAfterS ?? 1))))
  }
  return answer(c, JSON.stringify(body), apiError.status, { 'Content-Type': 'application/json' })
}

/**
 * A fault rule's dropped connection (mock/faults/rules.ts): thrown through the app so that nothing answers.
 * Over HTTP mock/server.ts destroys the socket; in process `app.request()` and `mock.fetch()` reject with it,
 * as fetch rejects on a network failure. `when` is 'before' (unprocessed) or 'after' (processed, committed).
 */
export class ConnectionDropped extends Error {
  constructor(readonly when: 'before' | 'after') {
    super(
      when === 'before'
        ? 'fault rule: the connection was closed before the request was processed'
        : 'fault rule: the request was processed and committed, then the connection was closed unanswered',
    )
    this.name = 'ConnectionDropped'
  }
}
