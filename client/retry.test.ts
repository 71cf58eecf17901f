import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { nextStep, type NextStep } from './next-step.js'
import {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  mayRetry,
  retryAfterMs,
  retryDelayMs,
  type RetryPolicy,
} from './retry.js'
import { loadRequirements } from '../spec/index.js'

const policy = fc.record<RetryPolicy>({
  maxAttempts: fc.integer({ min: 1, max: 20 }),
  baseDelayMs: fc.integer({ min: 1, max: 5_000 }),
  maxDelayMs: fc.integer({ min: 1, max: 120_000 }),
  maxTotalWaitMs: fc.integer({ min: 0, max: 600_000 }),
})

describe('reference client retry policy', () => {
  it('[RETRY-001][RETRY-006][ERR-012] resends only retryable answers: the envelope flag, else bare 429/502/503/504', () => {
    expect(isRetryable(503, { retryable: true })).toBe(true)
    expect(isRetryable(409, { retryable: false })).toBe(false)
    // An unknown code is handled by its retryable flag.
    expect(isRetryable(400, { retryable: true })).toBe(true)
    for (const status of [429, 502, 503, 504]) expect(isRetryable(status, undefined)).toBe(true)
    for (const status of [400, 404, 409, 500]) expect(isRetryable(status, undefined)).toBe(false)
  })

  it('[RETRY-002] waits exactly Retry-After when the answer has it (seconds or a date)', () => {
    fc.assert(
      fc.property(
        policy,
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 3600 }),
        (p, retry, s) => {
          const after = retryAfterMs(String(s), 0)
          expect(retryDelayMs(p, retry, after, () => 0.5)).toBe(s * 1000)
        },
      ),
    )
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000)
    expect(retryAfterMs('soon', 0)).toBeUndefined()
  })

  it('[RETRY-002][RETRY-003] backs off exponentially with jitter, within the per-retry cap', () => {
    fc.assert(
      fc.property(
        policy,
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (p, retry, r) => {
          const exp = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (retry - 1))
          const d = retryDelayMs(p, retry, undefined, () => r)
          expect(d).toBeGreaterThanOrEqual(Math.floor(exp / 2))
          expect(d).toBeLessThanOrEqual(Math.ceil(exp))
        },
      ),
    )
    // The jitter is random: two draws give two waits.
    const p = DEFAULT_RETRY_POLICY
    expect(retryDelayMs(p, 3, undefined, () => 0)).not.toBe(
      retryDelayMs(p, 3, undefined, () => 0.99),
    )
  })

  it('[RETRY-003] caps both the number of attempts and the total wait', () => {
    fc.assert(
      fc.property(
        policy,
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 700_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (p, attempts, waited, next) => {
          const ok = mayRetry(p, attempts, waited, next)
          expect(ok).toBe(attempts < p.maxAttempts && waited + next <= p.maxTotalWaitMs)
        },
      ),
    )
  })
})

describe('reference client next-step table', () => {
  const expected: Record<string, NextStep> = {
    'RETRY-008': 'one-more-later',
    'RETRY-009': 'change-conditions-first',
    'RETRY-010': 'publishing-settings',
    'RETRY-011': 'check-result-content',
    'RETRY-012': 'check-permissions',
    'RETRY-013': 'new-session',
    'RETRY-014': 'do-not-run-again',
    'RETRY-015': 'intended-end',
  }
  it("[RETRY-008][RETRY-009][RETRY-010][RETRY-011][RETRY-012][RETRY-013][RETRY-014][RETRY-015] maps every code of the document's table to its row", () => {
    const catalog = loadRequirements()
    for (const [id, step] of Object.entries(expected)) {
      const req = catalog.requirements.find((r) => r.id === id)!
      expect(req.codes.length).toBeGreaterThan(0)
      for (const code of req.codes) expect([id, code, nextStep(code)]).toEqual([id, code, step])
    }
  })

  it('[RETRY-016] does not run again for a code the table does not list, known or unknown', () => {
    expect(nextStep('INTERNAL_ERROR')).toBe('tell-a-person')
    expect(nextStep('SOME_CODE_FROM_A_LATER_MINOR_VERSION')).toBe('tell-a-person')
  })
})
