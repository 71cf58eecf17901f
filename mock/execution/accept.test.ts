/**
 * The Project's wait list before 429 CONCURRENCY_LIMIT is a fixture setting (assumed; default 10); the SU
 * balance check decides as the exact sum of open reservations would (the Project's load bound, store/project-load.ts, only skips the sum).
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { createMock } from '../index.js'
import { defaultWorld } from '../fixtures/test-worlds.js'
import { openReservations } from '../store/executions.js'
import type { OutputContract } from '../store/deployments.js'
import { nextScenario } from './accept.js'
import { BUILTIN_SCENARIOS, type ScenarioStep } from './scenarios.js'

const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const W = 'aaaaaaaa-f000-4000-8000-000000000001'

it('[CONC-002] refuses the acceptance after max_waiting_executions wait with 429 CONCURRENCY_LIMIT', async () => {
  const lowered = defaultWorld()
  lowered.projects[0]!.max_waiting_executions = 1
  const mock = await createMock({ fixtures: lowered, rateLimits: false })
  await mock.app.request('/_mock/scenarios', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ target_id: D, scenario: 'slow', times: 5 }),
  })
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) {
    const res = await mock.app.request(`/v1/deployments/${D}/sessions`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer sk_test_a_full',
        'Idempotency-Key': `w-${i}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } }),
    })
    statuses.push(res.status)
    if (res.status === 429)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
        'CONCURRENCY_LIMIT',
      )
  }
  // Two run, one waits, the fourth is beyond the limit.
  expect(statuses).toEqual([202, 202, 202, 429])
  mock.close()
})

it('[ERR-080][ERR-017] accepts a Turn exactly when the balance less the open reservations covers its max_su, whatever the bound of the Project’s load says', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(1, 0.9, 2.5),
      fc.array(fc.constantFrom(0.1, 0.2, 0.3, 0.7, 1e-7, 0.3333333), {
        minLength: 1,
        maxLength: 14,
      }),
      async (balance, maxSus) => {
        const world = defaultWorld()
        Object.assign(world.projects[0]!, {
          su_balance: balance,
          daily_budget_su: 1000,
          monthly_budget_su: 30000,
          max_waiting_executions: 100,
        })
        const mock = await createMock({ fixtures: world, rateLimits: false })
        try {
          for (const [i, maxSu] of maxSus.entries()) {
            const available = balance - openReservations(mock.deps.db, world.projects[0]!.id)
            const res = await mock.app.request(`/v1/deployments/${D}/sessions`, {
              method: 'POST',
              headers: {
                Authorization: 'Bearer sk_test_a_full',
                'Idempotency-Key': `b-${i}`,
                'Content-Type': 'application/json',
              },
              body: JSON.stringify({
                input: [{ type: 'TEXT', text: 'x' }],
                limits: { max_su: maxSu },
              }),
            })
            const code =
              res.status === 202
                ? null
                : ((await res.json()) as { error: { code: string } }).error.code
            expect(code).toBe(available < maxSu ? 'INSUFFICIENT_SU' : null)
          }
        } finally {
          mock.close()
        }
      },
    ),
    { numRuns: 25 },
  )
})

it("binds a built-in scenario's output steps to each contract's keys, once per contract: one frozen array shared by the executions that follow it", async () => {
  const mock = await createMock({ rateLimits: false })
  const contract = (required: string, optional: string): OutputContract[] => [
    { key: optional, type: 'TEXT', required: false },
    { key: required, type: 'TEXT', required: true },
  ]
  const a = contract('summary', 'notes')
  const b = contract('report', 'extra')
  const bound = (c: readonly OutputContract[]) => nextScenario(mock.deps, 'no-queue', c).steps
  const keysOf = (steps: readonly ScenarioStep[]) =>
    steps.flatMap((s) => (s.step === 'output' ? [s.output.key] : []))
  // The default scenario's output is bound to the required output of the contract, else "result".
  const first = bound(a)
  expect(keysOf(first)).toEqual(['summary'])
  expect(keysOf(bound(b))).toEqual(['report'])
  expect(keysOf(bound([]))).toEqual(['result'])
  expect(bound(a)).toBe(first)
  expect(bound(b)).not.toBe(first)
  const frozen = (v: unknown): boolean =>
    typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(frozen))
  expect(frozen(first)).toBe(true)
  // Every built-in scenario: an output step without a key takes the contract's key of its role.
  for (const s of BUILTIN_SCENARIOS) {
    const target = s.applies_to.includes('deployment') ? D : W
    const queued = await mock.app.request('/_mock/scenarios', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ target_id: target, scenario: s.name }),
    })
    expect(queued.status).toBe(201)
    const steps = nextScenario(mock.deps, target, b).steps
    s.steps.forEach((step, i) => {
      const made = steps[i]!
      if (step.step !== 'output' || step.output.key !== undefined) return expect(made).toBe(step)
      const role = step.output.contract
      expect(made.step === 'output' && made.output.key).toBe(
        role === 'required' ? 'report' : role === 'optional' ? 'extra' : 'result',
      )
    })
  }
  mock.close()
})
