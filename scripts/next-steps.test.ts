/**
 * The next step after a failed execution is data (spec/errors.yaml `next_step`), read by clients through
 * nextStepAfter() instead of a re-typed table.
 */
import { describe, expect, it } from 'vitest'
import { ERROR_CATALOG, nextStepAfter, UNLISTED_NEXT_STEP, type ErrorCode } from '../spec/index.js'

const DECISIONS = [
  'one more later',
  'change conditions first',
  'publishing settings',
  'check result content',
  'check permissions',
  'new Session',
  'do not run again',
  'intended end',
]

describe('next step after a failed execution', () => {
  const listed = (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter(
    (c) => 'next_step' in ERROR_CATALOG[c],
  )

  it('[RETRY-008][RETRY-009][RETRY-010][RETRY-011][RETRY-012][RETRY-013][RETRY-014][RETRY-015] gives every listed code one of the table decisions, only for codes an execution can end with', () => {
    expect(listed.length).toBeGreaterThan(0)
    const seen = new Set<string>()
    for (const code of listed) {
      const entry = ERROR_CATALOG[code] as { execution?: object; next_step: { decision: string } }
      expect(entry.execution, `${code} is an execution code`).toBeDefined()
      expect(DECISIONS).toContain(entry.next_step.decision)
      expect(nextStepAfter(code)).toEqual(entry.next_step)
      seen.add(entry.next_step.decision)
    }
    // Every row of the table has at least one code.
    expect([...seen].sort()).toEqual([...DECISIONS].sort())
    expect(nextStepAfter('QUEUE_TIMEOUT').decision).toBe('one more later')
    expect(nextStepAfter('AUTHORIZATION_REVOKED').decision).toBe('check permissions')
  })

  it('[RETRY-016] answers "do not run again, tell a person" for a code the table does not list, unknown codes included', () => {
    expect(nextStepAfter('CAPABILITY_DENIED')).not.toEqual(UNLISTED_NEXT_STEP)
    expect(nextStepAfter('ACTION_EXPIRED')).toEqual(UNLISTED_NEXT_STEP)
    expect(nextStepAfter('SOME_FUTURE_CODE')).toEqual(UNLISTED_NEXT_STEP)
  })
})
