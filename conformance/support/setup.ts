/**
 * Runs before every conformance test file (vitest setupFiles). Each test starts with an empty exchange record;
 * a test that fails carries its last exchanges (masked) in its meta for the report, and every test carries its
 * tally of checked responses per operation (the report's contract summary).
 */
import { afterEach, beforeEach } from 'vitest'
import { takeTestRecord, type Exchange, type OperationTally } from './exchanges.js'
import { takeTestWarnings, type Warning } from './warnings.js'

declare module 'vitest' {
  interface TaskMeta {
    /** The last exchanges before a failure (conformance/support/exchanges.ts). */
    exchanges?: Exchange[]
    /** Checked responses per operation and status. */
    operations?: OperationTally
    /** Findings that do not fail a check (undocumented response fields on a real target). */
    warnings?: Warning[]
    /** What the mock's client referee found in the test's own requests (use-target.ts). */
    clientViolations?: { rule: string; requirement_id: string }[]
    /** Client rules the test breaks on purpose (support/probes.ts). */
    probes?: string[]
  }
}

beforeEach(() => {
  takeTestRecord()
  takeTestWarnings()
})

afterEach(({ task }) => {
  const { exchanges, tally } = takeTestRecord()
  // The test's own failure is already recorded when the after-each hooks run.
  if (task.result?.state === 'fail' && exchanges.length > 0) task.meta.exchanges = exchanges
  if (Object.keys(tally).length > 0) task.meta.operations = tally
  const warnings = takeTestWarnings()
  if (warnings.length > 0) task.meta.warnings = warnings
})
