/**
 * Properties of the Run step rules: progress counts unique steps that succeeded (a retry once), a step ends
 * only while open, and the Run's queued time adds its first wait and every later step's.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  closeStep,
  NO_STEPS,
  openStep,
  queuedSoFarS,
  runOpenStep,
  stepStatusAtRunEnd,
  type RunStepState,
} from './run-steps.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

describe('Run steps', () => {
  it('[RUN-007][RUN-008] progress counts the unique steps that succeeded: a failed attempt adds nothing, a retry that succeeds adds its step once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.boolean()), { maxLength: 30 }),
        (attempts) => {
          let state: RunStepState = NO_STEPS
          const succeeded = new Set<string>()
          for (const [id, ok] of attempts) {
            state = openStep(state, id, 0, false)
            const closed = closeStep(state, ok ? 'SUCCEEDED' : 'FAILED')!
            expect(closed.stepId).toBe(id)
            expect(closed.state.open).toBeNull()
            state = closed.state
            if (ok) succeeded.add(id)
            expect(state.done).toEqual([...succeeded])
          }
          expect(state.done.length).toBeLessThanOrEqual(new Set(attempts.map(([id]) => id)).size)
        },
      ),
      params,
    )
  })

  it('ends nothing when no step is open', () => {
    expect(closeStep(NO_STEPS, 'SUCCEEDED')).toBeUndefined()
  })

  it('[TIME-001] counts the first wait (accepted to running) and each later step wait into the queued total', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600_000 }),
        fc.array(fc.integer({ min: 0, max: 600_000 }), { maxLength: 10 }),
        (firstWaitMs, waits) => {
          let state: RunStepState = NO_STEPS
          let now = firstWaitMs
          for (const [i, wait] of waits.entries()) {
            state = openStep(state, `s${i}`, now, true)
            expect(state.open?.started_at).toBeNull()
            now += wait
            state = runOpenStep(state, now, wait)
            expect(state.open?.started_at).toBe(now)
            state = closeStep(state, 'SUCCEEDED')!.state
          }
          const total = firstWaitMs + waits.reduce((a, b) => a + b, 0)
          expect(queuedSoFarS(state, 0, firstWaitMs, now)).toBeCloseTo(total / 1000, 6)
        },
      ),
      params,
    )
    // Not started yet: the wait so far runs up to now.
    expect(queuedSoFarS(NO_STEPS, 1000, null, 6000)).toBe(5)
  })

  it('[EVT-005] ends a step still open with the Run: a success for SUCCEEDED and PARTIALLY_SUCCEEDED, else the Run status', () => {
    expect(stepStatusAtRunEnd('SUCCEEDED')).toBe('SUCCEEDED')
    expect(stepStatusAtRunEnd('PARTIALLY_SUCCEEDED')).toBe('SUCCEEDED')
    expect(stepStatusAtRunEnd('FAILED')).toBe('FAILED')
    expect(stepStatusAtRunEnd('CANCELED')).toBe('CANCELED')
    expect(stepStatusAtRunEnd('EXPIRED')).toBe('EXPIRED')
  })
})
