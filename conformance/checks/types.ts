/** What every response check receives. */
import { envTargetKind, type Operation } from '../support/operations.js'
import type { Target } from '../support/target.js'

export type CheckedResponse = {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** Parsed JSON body when the response is JSON, else undefined. */
  body: unknown
  /** Raw text of the body (for SSE and binary checks); may be empty. */
  text: string
}

export type CheckContext = {
  method: string
  path: string
  operation: Operation | undefined
  response: CheckedResponse
  /** Undocumented response fields fail (true) or are warnings (false); default: isStrict() of support/strictness.ts. */
  strict?: boolean
  /**
   * The kind of target that answered; default: envTargetKind() of support/operations.ts. A real target is
   * judged by the document alone (support/document-view.ts): what the document allows but the mock does not
   * choose is a warning there; the mock (in this process or over HTTP) is held to its own choices too.
   */
  kind?: Target['kind']
}

/** The kind of target of a check's context. */
export const targetKind = (ctx: Pick<CheckContext, 'kind'>): Target['kind'] =>
  ctx.kind ?? envTargetKind()

/** A check returns nothing when the property holds and throws ConformanceFailure when it does not. */
export type ResponseCheck = {
  name: string
  /** Requirement ids of spec/requirements.yaml the check verifies on every response. */
  requirements: readonly string[]
  run(ctx: CheckContext): void
}

export const header = (res: CheckedResponse, name: string): string | undefined => {
  const v = res.headers[name.toLowerCase()]
  return Array.isArray(v) ? v.join(', ') : v
}

export const isJson = (res: CheckedResponse): boolean =>
  /^application\/(.+\+)?json/.test(header(res, 'content-type') ?? '')

type Envelope = {
  code: string
  message: string
  retryable: boolean
  request_id: string
  details: Record<string, unknown>
}

/** The body's error object when it is a well-formed envelope (every field of its type), else undefined. */
export function envelopeOf(res: CheckedResponse): Envelope | undefined {
  if (!isJson(res)) return undefined
  const error = (res.body as { error?: unknown } | undefined)?.error as
    Record<string, unknown> | undefined
  if (!error || typeof error !== 'object' || Array.isArray(error)) return undefined
  const ok =
    typeof error.code === 'string' &&
    typeof error.message === 'string' &&
    typeof error.retryable === 'boolean' &&
    typeof error.request_id === 'string' &&
    typeof error.details === 'object' &&
    error.details !== null &&
    !Array.isArray(error.details)
  return ok ? (error as Envelope) : undefined
}

/** The statuses a proxy may answer without the envelope (retry rule 5). */
export const PROXY_STATUSES: readonly number[] = [502, 503, 504]

/**
 * Retry rule 5: "A proxy may answer 502, 503 or 504 without the envelope". Such an answer is not the
 * service's, so no check holds it to the service's rules (headers, status lists, envelope, schema). On every
 * target a non-JSON 502/503/504 is one; on a real target also a JSON body without an error object (proxies
 * and gateways that answer JSON of their own). A mock's JSON answer without the envelope stays its fault.
 */
export function isProxyAnswer(res: CheckedResponse, kind: Target['kind']): boolean {
  if (!PROXY_STATUSES.includes(res.status)) return false
  if (!isJson(res)) return true
  if (kind !== 'real') return false
  const error = (res.body as { error?: unknown } | undefined)?.error
  return !error || typeof error !== 'object'
}
