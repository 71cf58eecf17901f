/**
 * SU accounting rules (Limits > SU budgets; Usage cost category): the Project's UTC day and month windows as
 * pure functions of the virtual `now`, the acceptance decision against the daily and monthly budgets, and the
 * split of an execution's spend into cost categories. No SQL, no HTTP, no clock: callers pass numbers in.
 */

import { memoizeInterval } from '../util/memo.js'

/** Document defaults: a Project may spend 1,000 SU per UTC day and 30,000 SU per UTC month. */
export const DEFAULT_DAILY_BUDGET_SU = 1000
export const DEFAULT_MONTHLY_BUDGET_SU = 30000

export type BudgetWindow = 'DAILY' | 'MONTHLY'

/** A half-open UTC interval [startMs, endMs); endMs is when the window resets. */
export type WindowBounds = { startMs: number; endMs: number }

/** The UTC calendar day holding nowMs (BUD-005: windows begin at UTC day boundaries); kept while now stays in it. */
export const utcDayWindow = memoizeInterval((nowMs: number): WindowBounds => {
  const d = new Date(nowMs)
  const startMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  return { startMs, endMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) }
})

/** The UTC calendar month holding nowMs (BUD-005: windows begin at UTC month boundaries); kept likewise. */
export const utcMonthWindow = memoizeInterval((nowMs: number): WindowBounds => {
  const d = new Date(nowMs)
  return {
    startMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    endMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  }
})

export const windowBounds = (window: BudgetWindow, nowMs: number): WindowBounds =>
  window === 'DAILY' ? utcDayWindow(nowMs) : utcMonthWindow(nowMs)

/** SU amounts are kept to a millionth so sums of small spends stay exact enough to compare. */
export const roundSu = (su: number): number => Math.round(su * 1e6) / 1e6

/** What a window holds at one moment: settled spend inside it and the reservations of open executions. */
export type WindowSpend = { settledSu: number; reservedSu: number }

export type BudgetInput = {
  dailyBudgetSu: number
  monthlyBudgetSu: number
  day: WindowSpend
  month: WindowSpend
  /** The SU the new execution reserves (its max_su). */
  requestSu: number
}

/** Why an acceptance is refused: the window, its budget, what it holds, and when it resets. */
export type BudgetRefusal = {
  window: BudgetWindow
  budget_su: number
  spent_su: number
  reserved_su: number
  requested_su: number
}

/**
 * BUD-003, BUD-004: an acceptance is refused when the window's settled spend plus open reservations plus the
 * new reservation would pass the budget (reaching it exactly is allowed). When both windows would pass, the
 * month is reported: waiting for the day to reset would not help (assumed; the document is silent).
 */
export function budgetRefusal(input: BudgetInput): BudgetRefusal | null {
  const check = (window: BudgetWindow, budget: number, spend: WindowSpend): BudgetRefusal | null =>
    roundSu(spend.settledSu + spend.reservedSu + input.requestSu) > budget
      ? {
          window,
          budget_su: budget,
          spent_su: roundSu(spend.settledSu),
          reserved_su: roundSu(spend.reservedSu),
          requested_su: input.requestSu,
        }
      : null
  return (
    check('MONTHLY', input.monthlyBudgetSu, input.month) ??
    check('DAILY', input.dailyBudgetSu, input.day)
  )
}

/**
 * Cost categories of usage (BUD-006: model, search, execution environment, file storage and transfer are
 * summed). The document does not say how an execution's cost divides; the mock assigns fixed shares so every
 * category total is a pure function of the spend and the categories always add up to the total.
 */
export const COST_CATEGORIES = [
  'model',
  'search',
  'execution_environment',
  'file_storage_transfer',
] as const
export type CostCategory = (typeof COST_CATEGORIES)[number]

/** Shares of an execution's spend (assumed): 80 % model, 20 % execution environment. */
export const EXECUTION_SHARES: Readonly<Record<CostCategory, number>> = {
  model: 0.8,
  search: 0,
  execution_environment: 0.2,
  file_storage_transfer: 0,
}

/** Splits su by the shares; the rounding remainder goes to the first category, so the parts sum to su. */
export function splitByCategory(
  su: number,
  shares: Readonly<Record<CostCategory, number>> = EXECUTION_SHARES,
): Record<CostCategory, number> {
  const parts = Object.fromEntries(
    COST_CATEGORIES.map((c) => [c, roundSu(su * shares[c])]),
  ) as Record<CostCategory, number>
  const rest = roundSu(su - COST_CATEGORIES.reduce((s, c) => s + parts[c], 0))
  parts[COST_CATEGORIES[0]] = roundSu(parts[COST_CATEGORIES[0]] + rest)
  return parts
}
