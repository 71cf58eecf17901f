/**
 * Forward-compatibility rehearsal (Versioning 2: within /v1 only additive changes occur; clients ignore or
 * safely handle unknown fields, event types and error codes). With `--forward-compat` or
 * `POST /_mock/forward-compat {"enabled": true}` the mock behaves like a later minor version: every JSON
 * response carries an unknown field (FUTURE_FIELD) at its top level and in each object one level down (list
 * items, `run`, `error`), every execution that starts appends an event of an unknown type whose content has
 * an unknown kind (SSE streams, Session items and every webhook endpoint get it), and every retryable error the
 * mock answers (429, 503) carries an unknown code with the same status, retryable flag, Retry-After and details.
 * Everything else stays valid.
 */

/** The unknown response field (an object, so a client that copies unknown fields copies a structure). */
export const FUTURE_FIELD = 'forecast'
export const futureFieldValue = (): Record<string, unknown> => ({
  added_in: '1.4.0',
  note: 'a field unknown to 1.3.0 clients: ignore it',
})

/** The unknown event types and the unknown content kind their data carries. */
export const FUTURE_EVENT_TYPES: Readonly<Record<'SESSION' | 'RUN', string>> = Object.freeze({
  SESSION: 'turn.insight',
  RUN: 'run.insight',
})
export const FUTURE_CONTENT_KIND = 'INSIGHT'
export const isFutureEventType = (type: string): boolean =>
  type === FUTURE_EVENT_TYPES.SESSION || type === FUTURE_EVENT_TYPES.RUN

/** The unknown codes a retryable error is answered with: one per status, so status and retryable agree. */
export function futureCode(status: number): string {
  return status === 429 ? 'REQUEST_BUDGET_PAUSED' : 'CAPACITY_REBALANCING'
}

/** The instance's switch (deps.forwardCompat): the start flag's value, changed by the control call. */
export type ForwardCompat = { enabled: boolean }

/**
 * Adds the unknown field to a JSON body: at its top level and to every plain object one level down (directly,
 * or as an element of an array). Other values are returned unchanged.
 */
export function withFutureFields(body: unknown): unknown {
  if (!isPlainObject(body)) return body
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(body)) {
    if (isPlainObject(v)) out[k] = { ...v, [FUTURE_FIELD]: futureFieldValue() }
    else if (Array.isArray(v))
      out[k] = v.map((x) => (isPlainObject(x) ? { ...x, [FUTURE_FIELD]: futureFieldValue() } : x))
    else out[k] = v
  }
  out[FUTURE_FIELD] = futureFieldValue()
  return out
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
