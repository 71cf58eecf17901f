/**
 * The suite obeys the document's client rules itself: against a mock, the client referee judges each test's
 * requests (use-target.ts reads GET /_mock/referee after every test). A test that breaks a retry rule on purpose
 * (to see the server's answer to a resend of a refused body, another body under a key, ...) says so with
 * probesClientRule; any other finding of an enforced rule fails the test. Findings of the other rules (polling
 * pace, SSE reconnects) are reported only: a state read right after an action is not polling.
 */
import type { TestContext } from 'vitest'

/** The client rules the suite itself must keep (Retry rules 1, 2, 4 and the unanswered request). */
export const ENFORCED_CLIENT_RULES: ReadonlySet<string> = new Set([
  'RETRY-001',
  'RETRY-002',
  'RETRY-004',
  'RETRY-017',
])

/** Declares that the test breaks these client rules on purpose (requirement ids of the referee's findings). */
export function probesClientRule(ctx: TestContext, ...requirementIds: string[]): void {
  ctx.task.meta.probes = [...(ctx.task.meta.probes ?? []), ...requirementIds]
}

export type ClientFinding = { rule: string; requirement_id: string }

/** The findings that fail the test: enforced rules the test did not declare as probed. */
export const unexpectedFindings = (
  findings: readonly ClientFinding[],
  probes: readonly string[] = [],
): ClientFinding[] =>
  findings.filter(
    (f) => ENFORCED_CLIENT_RULES.has(f.requirement_id) && !probes.includes(f.requirement_id),
  )
