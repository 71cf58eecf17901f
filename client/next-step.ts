/**
 * The document's "next step after a failed execution" table (Errors > Next step after a failed execution):
 * what a client does when a Turn or Run ends with an error code. The codes come from the catalog's
 * `next_step` (spec/errors.yaml); this file only names the document's eight decisions;
 * a code the table does not list means: do not run again, tell a person (RETRY-016).
 */
import { ERROR_CATALOG } from '../spec/generated/errors.js'

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

/** The document's decisions (the catalog's `next_step.decision`, spec/errors.yaml) as this client names them. */
const DECISIONS: Readonly<Record<string, NextStep>> = {
  'one more later': 'one-more-later',
  'change conditions first': 'change-conditions-first',
  'publishing settings': 'publishing-settings',
  'check result content': 'check-result-content',
  'check permissions': 'check-permissions',
  'new session': 'new-session',
  'do not run again': 'do-not-run-again',
  'intended end': 'intended-end',
}

/** The catalog's entry of each code: the one table of codes (spec/generated/errors.ts, from spec/errors.yaml). */
const CATALOG = ERROR_CATALOG as Readonly<Record<string, { next_step?: { decision: string } }>>

/** The next step for a failed execution's error code (also for codes this client has never heard of). */
export function nextStep(code: string): NextStep {
  if (!Object.hasOwn(CATALOG, code)) return 'tell-a-person'
  const decision = CATALOG[code]!.next_step?.decision
  return (decision && DECISIONS[decision.toLowerCase()]) || 'tell-a-person'
}
