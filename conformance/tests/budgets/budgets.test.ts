/**
 * Project SU budgets (Limits > SU budgets; Errors PROJECT_BUDGET_EXCEEDED, INSUFFICIENT_SU): the UTC day and
 * month windows, reservations counted at acceptance, and the window reset. Mock only: the control API
 * (/_mock/projects/{id}/budget) sets budgets and records settled spend, and virtual time crosses midnight.
 */
import fc from 'fast-check'
import { expect, it } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import { createSession } from '../../support/session-create.js'
import { mockOnly } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

type Window = {
  window_start: string
  reset_at: string
  budget_su: number
  settled_su: number
  reserved_su: number
}
type BudgetView = { su_balance: number; daily: Window; monthly: Window }
type BudgetSettings = {
  daily_budget_su?: number
  monthly_budget_su?: number
  spent_today_su?: number
  spent_this_month_su?: number
}

const budgetPath = () => `/_mock/projects/${target.world.projectId}/budget`

async function setBudget(settings: BudgetSettings): Promise<BudgetView> {
  const res = await target.api.post(budgetPath(), settings, { check: false })
  expect(res.status, res.text).toBe(200)
  return res.body as BudgetView
}
async function budget(): Promise<BudgetView> {
  const res = await target.api.get(budgetPath(), { check: false })
  expect(res.status, res.text).toBe(200)
  return res.body as BudgetView
}

const accept = (maxSu: number): Promise<ApiResponse> =>
  createSession(target, {
    input: [{ type: 'TEXT', text: 'Go.' }],
    limits: { max_su: maxSu },
  })

/** Seconds from the current virtual time to an ISO instant. */
async function secondsUntil(iso: string): Promise<number> {
  const { now } = await target.control!.clock()
  return Math.ceil((Date.parse(iso) - Date.parse(now)) / 1000)
}

it(`${req('BUD-003', 'ERR-082', 'ERR-017')} an acceptance that would pass the daily budget is 402 PROJECT_BUDGET_EXCEEDED with the window and reset_at`, async (ctx) => {
  mockOnly(ctx, target, 'control API sets the day’s spend')
  const view = await setBudget({ spent_today_su: 950 })
  const refused = await accept(100)
  const error = expectError(refused, 'PROJECT_BUDGET_EXCEEDED', {
    details: { window: 'DAILY', reset_at: view.daily.reset_at },
  })
  expect(error.retryable).toBe(true)
  expect(view.daily.reset_at).toMatch(/T00:00:00(\.000)?Z$/)
  // Reaching the budget exactly is allowed.
  expect((await accept(50)).status).toBe(202)
  expectError(await accept(1), 'PROJECT_BUDGET_EXCEEDED')
})

it(`${req('BUD-003')} open reservations count: max_su is held until the execution settles`, async (ctx) => {
  const control = mockOnly(ctx, target, 'control API lowers the budget')
  await setBudget({ daily_budget_su: 150 })
  expect((await accept(100)).status).toBe(202)
  expectError(await accept(100), 'PROJECT_BUDGET_EXCEEDED', {
    details: { window: 'DAILY', reserved_su: 100 },
  })
  await control.advance(30)
  const view = await budget()
  expect(view.daily.reserved_su).toBe(0)
  expect(view.daily.settled_su).toBeGreaterThan(0)
  expect((await accept(100)).status).toBe(202)
})

it(`${req('BUD-005')} the daily window resets at the next UTC midnight`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time')
  const view = await setBudget({ spent_today_su: 1000 })
  expectError(await accept(1), 'PROJECT_BUDGET_EXCEEDED')
  await control.advance((await secondsUntil(view.daily.reset_at)) - 1)
  expectError(await accept(1), 'PROJECT_BUDGET_EXCEEDED')
  await control.advance(1)
  expect((await budget()).daily.settled_su).toBe(0)
  expect((await accept(1)).status).toBe(202)
})

it(`${req('BUD-004', 'BUD-005')} the monthly budget holds across days and resets on the 1st (UTC)`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time')
  const view = await setBudget({ spent_this_month_su: 29_950 })
  expect(view.daily.settled_su).toBe(0)
  const refused = await accept(100)
  expectError(refused, 'PROJECT_BUDGET_EXCEEDED', {
    details: { window: 'MONTHLY', reset_at: view.monthly.reset_at },
  })
  expect(view.monthly.reset_at).toMatch(/-01T00:00:00(\.000)?Z$/)
  await control.advance(await secondsUntil(view.daily.reset_at))
  expectError(await accept(100), 'PROJECT_BUDGET_EXCEEDED', { details: { window: 'MONTHLY' } })
  expect((await accept(50)).status).toBe(202)
  await control.advance(await secondsUntil(view.monthly.reset_at))
  expect((await budget()).monthly.settled_su).toBeLessThanOrEqual(30_000)
  expect((await accept(100)).status).toBe(202)
})

it(`${req('ERR-080', 'ERR-017')} a balance that cannot cover max_su is 402 INSUFFICIENT_SU, reported before the budget`, async (ctx) => {
  mockOnly(ctx, target, 'control API sets the balance')
  await setBudget({ spent_today_su: 1000 })
  const res = await target.api.post(
    `/_mock/projects/${target.world.projectId}/balance`,
    { su_balance: 10 },
    { check: false },
  )
  expect(res.status, res.text).toBe(200)
  expectError(await accept(20), 'INSUFFICIENT_SU')
  expectError(await accept(5), 'PROJECT_BUDGET_EXCEEDED')
})

it(`${req('BUD-003', 'BUD-005')} random acceptances over random UTC times never take a day past its budget without a 402`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time and budget control')
  const DAILY = 3
  type Step = { kind: 'accept'; su: number } | { kind: 'wait'; seconds: number }
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('accept' as const), su: fc.constantFrom(0.5, 1, 1.5, 2) }),
    fc.record({
      kind: fc.constant('wait' as const),
      seconds: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 3600, max: 40_000 })),
    }),
  )
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
      await target.fresh()
      await setBudget({ daily_budget_su: DAILY })
      for (const s of steps) {
        if (s.kind === 'wait') {
          await control.advance(s.seconds)
        } else {
          const res = await accept(s.su)
          if (res.status === 402) {
            const e = expectError(res, 'PROJECT_BUDGET_EXCEEDED').details as {
              spent_su: number
              reserved_su: number
              requested_su: number
              budget_su: number
            }
            expect(e.spent_su + e.reserved_su + e.requested_su).toBeGreaterThan(e.budget_su)
          } else {
            expect(res.status, res.text).toBe(202)
          }
        }
        const view = await budget()
        expect(view.daily.settled_su + view.daily.reserved_su).toBeLessThanOrEqual(DAILY + 1e-9)
      }
    }),
    fcParams({ numRuns: 10 }),
  )
})

it(`${req('CONC-002', 'BUD-003')} with the default world and default limits, acceptances beyond the concurrency limit get 429 CONCURRENCY_LIMIT, never a 402 from executions that only wait`, async (ctx) => {
  const control = mockOnly(ctx, target, 'where the limit starts is an assumption of the mock')
  await control.queueScenario(target.world.deployments.active, 'slow', 20)
  let last: ApiResponse | undefined
  for (let accepted = 0; accepted < 13;) {
    // No limits: every execution has the default max_su of 100.
    last = await createSession(target, { input: [{ type: 'TEXT', text: 'Go.' }] }, { pace: false })
    const code = (last.body as { error?: { code: string } }).error?.code
    if (code === 'RATE_LIMITED') await control.advance(60)
    else if (last.status === 202) accepted++
    else break
  }
  expectError(last!, 'CONCURRENCY_LIMIT')
  // Only the two running executions hold a reservation against the day's budget.
  expect((await budget()).daily.reserved_su).toBe(200)
})

it(`${req('BUD-003', 'BUD-007')} a waiting execution reserves nothing against the Project budget; it starts when its max_su fits`, async (ctx) => {
  const control = mockOnly(ctx, target, 'control API lowers the budget')
  await setBudget({ daily_budget_su: 250 })
  await control.queueScenario(target.world.deployments.active, 'slow', 2)
  expect((await accept(100)).status).toBe(202)
  expect((await accept(100)).status).toBe(202)
  // Two run (200 SU reserved); two more are accepted and wait: 200 + 50 fits the 250 budget each time.
  expect((await accept(50)).status).toBe(202)
  expect((await accept(50)).status).toBe(202)
  let view = await budget()
  expect(view.daily.reserved_su).toBe(200)
  // The running executions' reservations still refuse an acceptance that would pass the budget.
  expectError(await accept(51), 'PROJECT_BUDGET_EXCEEDED', {
    details: { window: 'DAILY', reserved_su: 200 },
  })
  // Usage shows the running executions' reservations.
  const usage = await target.api.get('/v1/usage', { key: target.world.keys.full })
  expect((usage.body as { status: string }).status).toBe('PENDING')
  const categories = (usage.body as { categories: Record<string, { reserved_su: number }> })
    .categories
  const reserved = Object.values(categories).reduce((s, c) => s + c.reserved_su, 0)
  expect(reserved).toBeCloseTo(200, 6)
  // The slow two end by their time limit; the waiting two start, and the spend stays within the budget.
  await control.advance(3700)
  view = await budget()
  expect(view.daily.settled_su + view.daily.reserved_su).toBeLessThanOrEqual(250)
})
