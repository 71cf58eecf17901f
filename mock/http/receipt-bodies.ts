/**
 * The 202 answers of the operations that create an execution (createSession, addTurn, createRun): functions of
 * the execution's ids and the receipt's expiry alone (a new execution is QUEUED). The handlers answer with
 * them, and a replay of a receipt carried by the execution's row (store/carried-receipts.ts) rebuilds the same
 * text from that row.
 */
import type { components } from '../../spec/index.js'
import type { CarriedAnswer } from '../store/carried-receipts.js'
import { iso } from '../util/iso.js'

type Schemas = components['schemas']

/** The answer to a new Turn (SessionReceipt and TurnReceipt have the same fields). */
export const turnReceiptBody = (
  sessionId: string,
  turnId: string,
  idempotencyExpiresAt: string,
): Schemas['SessionReceipt'] & Schemas['TurnReceipt'] => ({
  session_id: sessionId,
  turn_id: turnId,
  status: 'QUEUED',
  idempotency_expires_at: idempotencyExpiresAt,
  status_url: `/v1/sessions/${sessionId}/turns/${turnId}`,
  events_url: `/v1/sessions/${sessionId}/events`,
})

/** The answer to a new Run. */
export const runReceiptBody = (
  runId: string,
  idempotencyExpiresAt: string,
): Schemas['RunReceipt'] => ({
  run_id: runId,
  status_url: `/v1/runs/${runId}`,
  events_url: `/v1/runs/${runId}/events`,
  idempotency_expires_at: idempotencyExpiresAt,
})

/** The operations whose receipt an execution's row may carry. */
export const carriesReceipt = (operationId: string): boolean =>
  operationId === 'createSession' || operationId === 'addTurn' || operationId === 'createRun'

/** A carried receipt's answer, rebuilt from its execution and expiry. */
function carriedAnswer(a: CarriedAnswer, expiresAt: number): Record<string, string> {
  const expires = iso(expiresAt)
  return a.kind === 'RUN'
    ? runReceiptBody(a.id, expires)
    : turnReceiptBody(a.session_id!, a.id, expires)
}

/** The JSON text of a carried receipt's answer, rebuilt from its execution and expiry. */
export const carriedAnswerJson = (a: CarriedAnswer, expiresAt: number): string =>
  JSON.stringify(carriedAnswer(a, expiresAt))

/**
 * Whether the carried receipt's rebuilt answer serialises to the very text of `body` (an answer's body as the
 * handler gave it), without serialising either: the same keys in the same order, each value the same string.
 * Anything else (a nested value, a number, a key more or less) is reported as different, so a doubt keeps a
 * receipt row.
 */
export function rebuildsAnswer(a: CarriedAnswer, expiresAt: number, body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false
  const rebuilt = carriedAnswer(a, expiresAt)
  const keys = Object.keys(body)
  const want = Object.keys(rebuilt)
  if (keys.length !== want.length) return false
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!
    const v = (body as Record<string, unknown>)[k]
    if (k !== want[i] || typeof v !== 'string' || v !== rebuilt[k]) return false
  }
  return true
}
