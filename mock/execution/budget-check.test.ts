/**
 * The Project budget check (BUD-003 daily, BUD-004 monthly, BUD-005 UTC windows) decides as the exact sums of
 * the ledger would: usage_days' bounds and the open executions' bound (the Project's load, store/project-load.ts) only skip the sums when
 * even the bounds leave room, so for any settled spend and any open executions (running with some SU spent, or
 * waiting), whether near a budget's edge or far below it, acceptance and refusal are those of the exact check.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { budgetRefusal, utcDayWindow, utcMonthWindow } from '../domain/budgets.js'
import { createMock, type Mock } from '../index.js'
import { budgetSpend, setProjectBudgets } from '../store/usage.js'
import { fitsProjectBudget } from './ledger.js'

const P = 'aaaaaaaa-0000-4000-8000-000000000000'
const DAY = 86_400_000
let mock: Mock
beforeAll(async () => {
  mock = await createMock({ rateLimits: false })
})
afterAll(() => mock.close())

/** What the exact sums decide: no refusal. */
function exactlyFits(requestSu: number, budgets: { daily: number; monthly: number }): boolean {
  const now = mock.deps.clock.nowMs()
  const day = utcDayWindow(now)
  const month = utcMonthWindow(now)
  const spend = budgetSpend(mock.deps.db, P, day, month)
  return (
    budgetRefusal({
      dailyBudgetSu: budgets.daily,
      monthlyBudgetSu: budgets.monthly,
      day: { settledSu: spend.daySu, reservedSu: spend.committedSu },
      month: { settledSu: spend.monthSu, reservedSu: spend.committedSu },
      requestSu,
    }) === null
  )
}

it('accepts and refuses as the exact sums do, at and around both budgets’ edges [BUD-003] [BUD-004] [BUD-005]', () => {
  const db = mock.deps.db
  const now = mock.deps.clock.nowMs()
  const month = utcMonthWindow(now)
  const dayStart = utcDayWindow(now).startMs
  const spentAt = fc.oneof(
    fc.constantFrom(now, dayStart, dayStart - 1, month.startMs, dayStart - DAY),
    fc.integer({ min: month.startMs, max: now }),
  )
  const rows = fc.array(
    fc.record({
      su: fc.oneof(
        fc.constantFrom(0.1, 0.2, 0.3, 1e-7, 0.3333333, 0.999999, 5),
        fc.double({ min: 0, max: 10, noNaN: true }),
      ),
      at: spentAt,
    }),
    { maxLength: 12 },
  )
  // Open executions of the Project: running ones commit MAX(max_su, spent_su) (the executor keeps spent_su at
  // or below max_su), waiting ones nothing; all of them count in the Project's load bound.
  const open = fc.array(
    fc.record({
      maxSu: fc.oneof(
        fc.constantFrom(0.01, 0.1, 1, 5),
        fc.double({ min: 0, max: 10, noNaN: true }),
      ),
      spent: fc.double({ min: 0, max: 1, noNaN: true }),
      admitted: fc.boolean(),
    }),
    { maxLength: 4 },
  )
  // The request lands just below, on, or just above what is left of a budget (or anywhere).
  const nudge = fc.constantFrom(-1e-5, -1e-6, -5e-7, -1e-7, 0, 1e-7, 5e-7, 1e-6, 1e-5, 0.5, -0.5)
  fc.assert(
    fc.property(
      rows,
      open,
      fc.constantFrom(1, 7.5, 20, 1000),
      fc.constantFrom(1, 7.5, 20, 100, 30000),
      fc.boolean(),
      nudge,
      (entries, executions, daily, monthly, againstDaily, delta) => {
        db.tx(() => {
          db.stmt('DELETE FROM usage_ledger').run()
          db.stmt("DELETE FROM executions WHERE id LIKE 'budget-check-%'").run()
          executions.forEach((e, i) =>
            db
              .stmt(
                `INSERT INTO executions (id, seq, kind, project_id, api_key, status, scenario, steps_json, input_json,
                   metadata_json, execution_seconds, queue_seconds, max_su, spent_su, created_at, admitted_at)
                 VALUES (?, (SELECT COALESCE(MAX(rowid), 0) + 1 FROM executions), 'TURN', ?, 'sk_test_a_full', ?,
                   'succeed', '[]', '[]', '{}', 3600, 600, ?, ?, ?, ?)`,
              )
              .run(
                `budget-check-${i}`,
                P,
                e.admitted ? 'RUNNING' : 'QUEUED',
                e.maxSu,
                Math.round(e.maxSu * e.spent * 1e6) / 1e6,
                now,
                e.admitted ? now : null,
              ),
          )
          for (const e of entries)
            db.stmt(
              "INSERT INTO usage_ledger (project_id, category, su, settled_at) VALUES (?, 'model', ?, ?)",
            ).run(P, e.su, e.at)
          setProjectBudgets(db, P, { daily_budget_su: daily, monthly_budget_su: monthly })
        })
        const spend = budgetSpend(db, P, utcDayWindow(now), month)
        const left = againstDaily ? daily - spend.daySu : monthly - spend.monthSu
        const requestSu = Math.max(1e-9, left - spend.committedSu + delta)
        expect(fitsProjectBudget(mock.deps, P, requestSu)).toBe(
          exactlyFits(requestSu, { daily, monthly }),
        )
      },
    ),
    { numRuns: 400 },
  )
})
