/**
 * The reference client of the interface (README "Reference client"): retries, idempotent resends, polling,
 * SSE resume and dedup, checked downloads and the next-step table, all by the document's client rules.
 */
export {
  ReferenceClient,
  MIN_POLL_INTERVAL_MS,
  MAX_POLL_INTERVAL_MS,
  ONE_MORE_LATER_WAIT_MS,
  type TurnOutcome,
  type ClientOptions,
  type RequestOptions,
  type Answer,
  type SessionCreateInput,
  type SessionReceipt,
  type TurnReceipt,
  type FileReceipt,
  type Turn,
  type RunCreateInput,
  type RunReceipt,
  type RunDetail,
  type FileOutput,
  type ServiceEvent,
} from './client.js'
export { ServiceError, NetworkError, IntegrityError, type ErrorEnvelope } from './errors.js'
export { nextStep, type NextStep } from './next-step.js'
export {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  retryAfterMs,
  retryDelayMs,
  mayRetry,
  type RetryPolicy,
} from './retry.js'
export type { FollowOptions } from './sse.js'
