/**
 * The document's "next step after a failed execution" table (Errors > Next step after a failed execution):
 * what a client does when a Turn or Run ends with an error code. One table, typed by the catalog's codes;
 * a code the table does not list means: do not run again, tell a person (RETRY-016).
 */
import type { ErrorCode } from '../spec/generated/errors.js'

export type NextStep =
  /** RETRY-008: wait, create one new execution with the same input; stop and report if the code repeats. */
  | 'one-more-later'
  /** RETRY-009: shrink or split input, raise deadline or budget within limits, or top up SU first. */
  | 'change-conditions-first'
  /** RETRY-010: do not repeat the same input; tell the publisher. */
  | 'publishing-settings'
  /** RETRY-011: check the input, create at most one new execution with corrected input. */
  | 'check-result-content'
  /** RETRY-012: new execution only after permission is restored. */
  | 'check-permissions'
  /** RETRY-013: run in a new Session; report if it repeats. */
  | 'new-session'
  /** RETRY-014: verify the outcome in the external system first. */
  | 'do-not-run-again'
  /** RETRY-015: new execution only if the requester's decision changes. */
  | 'intended-end'
  /** RETRY-016: a code not in the table: do not run again, tell a person. */
  | 'tell-a-person'

const TABLE: Partial<Record<ErrorCode, NextStep>> = {
  QUEUE_TIMEOUT: 'one-more-later',
  RECOVERY_EXHAUSTED: 'one-more-later',
  EXECUTION_FAILED: 'one-more-later',
  USAGE_PENDING: 'one-more-later',
  ARTIFACT_PREPARATION_TIMEOUT: 'one-more-later',
  ARTIFACT_PREPARATION_FAILED: 'one-more-later',
  SESSION_SANDBOX_UNAVAILABLE: 'one-more-later',
  EXECUTION_TIMEOUT: 'change-conditions-first',
  RUN_DEADLINE_EXCEEDED: 'change-conditions-first',
  BUDGET_EXCEEDED: 'change-conditions-first',
  INSUFFICIENT_SU: 'change-conditions-first',
  OUTPUT_SCHEMA_MISMATCH: 'publishing-settings',
  OUTPUT_LIMIT_EXCEEDED: 'publishing-settings',
  OUTPUT_MISSING: 'publishing-settings',
  OUTPUT_PATH_DENIED: 'publishing-settings',
  CAPABILITY_DENIED: 'publishing-settings',
  SESSION_RESOURCES_NOT_READY: 'publishing-settings',
  ACTION_REQUIRED_UNSUPPORTED: 'publishing-settings',
  WORKFLOW_UNAVAILABLE: 'publishing-settings',
  OUTPUT_URL_INVALID: 'check-result-content',
  OUTPUT_CONTAINS_CREDENTIALS: 'check-result-content',
  INVALID_FILENAME: 'check-result-content',
  UNSUPPORTED_FILE_TYPE: 'check-result-content',
  AUTHORIZATION_REVOKED: 'check-permissions',
  RUNTIME_CONTEXT_MISMATCH: 'new-session',
  EXTERNAL_EFFECT_UNKNOWN: 'do-not-run-again',
  CANCELED: 'intended-end',
  SESSION_DELETED: 'intended-end',
}

/** The next step for a failed execution's error code (also for codes this client has never heard of). */
export function nextStep(code: string): NextStep {
  return TABLE[code as ErrorCode] ?? 'tell-a-person'
}
