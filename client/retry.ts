/**
 * The retry policy of the reference client (Retry rules 1-5): which answers may be resent, and how long to
 * wait first: Retry-After when the answer has it, otherwise capped exponential backoff with random jitter;
 * both the number of retries and the total wait are capped. Pure: randomness is a parameter.
 */

export type RetryPolicy = {
  /** Attempts in all, the first included (RETRY-003). */
  maxAttempts: number
  /** Backoff of the first retry, doubled each retry, before jitter. */
  baseDelayMs: number
  /** Largest backoff of one retry (Retry-After is honoured even when larger). */
  maxDelayMs: number
  /** Largest total wait over all retries of one request (RETRY-003). */
  maxTotalWaitMs: number
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 8,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxTotalWaitMs: 5 * 60_000,
})

/** Statuses a proxy sends without the envelope that a client treats as retryable (Retry rules 5). */
const BARE_RETRYABLE = new Set([429, 502, 503, 504])

/**
 * Whether an error answer may be resent (RETRY-001, RETRY-006, ERR-012): the envelope's retryable flag when
 * there is one (also for codes this client does not know), else 429/502/503/504 only.
 */
export function isRetryable(
  status: number,
  envelope: { retryable?: unknown } | undefined,
): boolean {
  if (typeof envelope?.retryable === 'boolean') return envelope.retryable
  return BARE_RETRYABLE.has(status)
}

/** Retry-After in ms: delay-seconds or an HTTP date (relative to `nowMs`); undefined when absent or bad. */
export function retryAfterMs(header: string | null, nowMs: number): number | undefined {
  if (header === null) return undefined
  const value = header.trim()
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/**
 * The wait before retry number `retry` (1 for the first retry): Retry-After when given (RETRY-002), else
 * "equal jitter" backoff: half of min(cap, base * 2^(retry-1)) plus a random part of the other half.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfter: number | undefined,
  random: () => number,
): number {
  if (retryAfter !== undefined) return retryAfter
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1))
  return Math.round(exp / 2 + random() * (exp / 2))
}

/** Whether another retry fits the caps after `attempts` attempts and `waitedMs` of waiting (RETRY-003). */
export function mayRetry(
  policy: RetryPolicy,
  attempts: number,
  waitedMs: number,
  nextDelayMs: number,
): boolean {
  return attempts < policy.maxAttempts && waitedMs + nextDelayMs <= policy.maxTotalWaitMs
}
