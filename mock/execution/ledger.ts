/**
 * Settlement into the SU ledger and the Project budget windows (Limits > SU budgets): recordUsage() writes an
 * execution's settled spend when its usage becomes FINAL; checkProjectBudget() refuses an acceptance that would
 * pass the UTC day's or month's budget (402 PROJECT_BUDGET_EXCEEDED); budgetView() is what the control API
 * shows. The rules themselves are pure functions in mock/domain/budgets.ts.
 */
import type { Deps } from '../deps.js'
import {
  budgetRefusal,
  COST_CATEGORIES,
  roundSu,
  splitByCategory,
  utcDayWindow,
  utcMonthWindow,
  type CostCategory,
} from '../domain/budgets.js'
import { ApiError } from '../errors.js'
import {
  getExecution,
  getSession,
  projectLoad,
  type ExecutionRecord,
  type ProjectLoad,
} from '../store/executions.js'
import type { StoredFile } from '../store/files.js'
import { chargeProject, getProject, viewProject } from '../store/projects.js'
import {
  budgetSpend,
  insertLedgerEntry,
  openCommitted,
  settledBounds,
  settledInWindow,
} from '../store/usage.js'

/**
 * Records an execution's settled spend (spent_su, split by cost category) at the current virtual time. Call it
 * once per execution, where its usage becomes FINAL and the Project is charged (finishExecution), with the
 * same amount that is charged, so the ledger and the balance agree.
 */
export function recordUsage(deps: Deps, e: ExecutionRecord): void {
  if (e.spent_su <= 0) return
  const nowMs = deps.clock.nowMs()
  const runId = runOf(deps, e)
  const parts = splitByCategory(e.spent_su)
  for (const category of COST_CATEGORIES) {
    if (parts[category] <= 0) continue
    insertLedgerEntry(deps.db, {
      project_id: e.project_id,
      execution_id: e.id,
      deployment_id: e.deployment_id,
      session_id: e.session_id,
      turn_id: e.kind === 'TURN' ? e.id : null,
      run_id: runId,
      category,
      su: parts[category],
      settled_at: nowMs,
    })
  }
}

/** The Run an execution counts toward: itself, or the Run whose step holds its Session; else null. */
function runOf(deps: Deps, e: ExecutionRecord): string | null {
  if (e.kind === 'RUN') return e.id
  return e.session_id === null ? null : (getSession(deps.db, e.session_id)?.workflow_run_id ?? null)
}

/**
 * ART-003, BUD-009: consuming a download address costs the Project's `download_su` (fixture value; assumed
 * amount), settled at once in the file_storage_transfer category and taken from the balance. The entry names
 * the artifact's Deployment, Session and execution, so filtered usage shows it where the file belongs; the
 * execution's own usage (settled when it ended) does not change. Issuing an address costs nothing.
 */
export function chargeDownload(deps: Deps, file: StoredFile): void {
  const su = roundSu(getProject(deps.db, file.project_id)?.download_su ?? 0)
  if (su <= 0) return
  const e = file.execution_id === null ? undefined : getExecution(deps.db, file.execution_id)
  insertLedgerEntry(deps.db, {
    project_id: file.project_id,
    execution_id: e?.id ?? null,
    deployment_id: file.deployment_id,
    session_id: file.session_id,
    turn_id: e?.kind === 'TURN' ? e.id : null,
    run_id: e ? runOf(deps, e) : null,
    category: 'file_storage_transfer',
    su,
    settled_at: deps.clock.nowMs(),
  })
  chargeProject(deps.db, file.project_id, su)
}

/** One budget window as the control API shows it. */
export type WindowView = {
  window_start: string
  reset_at: string
  budget_su: number
  settled_su: number
  reserved_su: number
}

/** The Project's day and month windows at the current virtual time, or undefined for an unknown Project. */
export function budgetView(
  deps: Deps,
  projectId: string,
): { su_balance: number; daily: WindowView; monthly: WindowView } | undefined {
  const project = getProject(deps.db, projectId)
  if (!project) return undefined
  const nowMs = deps.clock.nowMs()
  const reserved = roundSu(openCommitted(deps.db, projectId))
  const view = (bounds: { startMs: number; endMs: number }, budget: number): WindowView => ({
    window_start: new Date(bounds.startMs).toISOString(),
    reset_at: new Date(bounds.endMs).toISOString(),
    budget_su: budget,
    settled_su: roundSu(settledInWindow(deps.db, projectId, bounds.startMs, bounds.endMs)),
    reserved_su: reserved,
  })
  return {
    su_balance: roundSu(project.su_balance),
    daily: view(utcDayWindow(nowMs), project.daily_budget_su),
    monthly: view(utcMonthWindow(nowMs), project.monthly_budget_su),
  }
}

/**
 * BUD-003, BUD-004, BUD-005: 402 PROJECT_BUDGET_EXCEEDED (retryable) when reserving requestSu would take the
 * UTC day's or month's settled spend plus open reservations past the Project's budget. details: window
 * (DAILY or MONTHLY), reset_at (the window's end), budget_su, spent_su, reserved_su, requested_su. `load`: the
 * Project's open executions when the caller has read them (projectLoad).
 */
export function checkProjectBudget(
  deps: Deps,
  projectId: string,
  requestSu: number,
  load?: ProjectLoad,
): void {
  const found = projectBudgetRefusal(deps, projectId, requestSu, load)
  if (!found) return
  const { refusal, resetMs } = found
  throw new ApiError('PROJECT_BUDGET_EXCEEDED', {
    message: `The Project's ${refusal.window === 'DAILY' ? 'daily' : 'monthly'} SU budget (${refusal.budget_su} SU, UTC window) would be exceeded; it resets at ${new Date(resetMs).toISOString()}.`,
    details: { ...refusal, reset_at: new Date(resetMs).toISOString() },
  })
}

/** Whether reserving requestSu now keeps the Project's day and month within budget (a waiting execution starts). */
export const fitsProjectBudget = (deps: Deps, projectId: string, requestSu: number): boolean =>
  projectBudgetRefusal(deps, projectId, requestSu) === undefined

/**
 * The budget window that reserving requestSu would pass: settled spend in the UTC day or month plus the
 * reservations of running executions (openCommitted) plus requestSu, against the Project's budgets.
 */
function projectBudgetRefusal(
  deps: Deps,
  projectId: string,
  requestSu: number,
  load: ProjectLoad = projectLoad(deps.db, projectId),
) {
  const project = viewProject(deps.db, projectId)!
  const nowMs = deps.clock.nowMs()
  const day = utcDayWindow(nowMs)
  const month = utcMonthWindow(nowMs)
  // Upper bounds settle most checks: when even they leave room (with a margin far above any rounding of the
  // sums), the exact sums would too. Otherwise the exact sums decide, and give the details. The settled
  // bounds are the day's and month's usage_days rows (kept between settlements); the reservations' bound is
  // first the load's (every open execution's max_su: a running one commits MAX(max_su, spent_su), and the
  // executor never lets spent_su pass max_su), then the running executions' exact sum.
  if (day.startMs >= 0) {
    const settled = settledBounds(deps.db, projectId, day, month)
    const room = (budget: number, settledBound: number, committedSu: number) =>
      committedSu + settledBound + requestSu <= budget - 1e-6 * (1 + Math.abs(budget))
    const fits = (committedSu: number) =>
      room(project.daily_budget_su, settled.dayBoundSu, committedSu) &&
      room(project.monthly_budget_su, settled.monthBoundSu, committedSu)
    if (fits(load.maxSuBound) || fits(openCommitted(deps.db, projectId))) return undefined
  }
  const spend = budgetSpend(deps.db, projectId, day, month)
  const reservedSu = spend.committedSu
  const refusal = budgetRefusal({
    dailyBudgetSu: project.daily_budget_su,
    monthlyBudgetSu: project.monthly_budget_su,
    day: { settledSu: spend.daySu, reservedSu },
    month: { settledSu: spend.monthSu, reservedSu },
    requestSu,
  })
  if (!refusal) return undefined
  return { refusal, resetMs: refusal.window === 'DAILY' ? day.endMs : month.endMs }
}

/**
 * Control API rehearsal: records a project-level settled spend now, so that the UTC day's (or the month's,
 * placed at the month's first instant when that is before today) settled total becomes the given value. Totals
 * only grow; a lower value is refused. The balance is not charged (set it with /_mock/projects/{id}/balance).
 */
export function rehearseSpend(
  deps: Deps,
  projectId: string,
  target: { spent_today_su?: number; spent_this_month_su?: number },
  category: CostCategory = 'model',
): { ok: true } | { ok: false; problem: string } {
  const nowMs = deps.clock.nowMs()
  const day = utcDayWindow(nowMs)
  const month = utcMonthWindow(nowMs)
  const entries: { su: number; at: number }[] = []
  const today = settledInWindow(deps.db, projectId, day.startMs, day.endMs)
  const thisMonth = settledInWindow(deps.db, projectId, month.startMs, month.endMs)
  let addedToday = 0
  if (target.spent_today_su !== undefined) {
    addedToday = roundSu(target.spent_today_su - today)
    if (addedToday < 0)
      return { ok: false, problem: `spent_today_su is below today's settled ${roundSu(today)} SU` }
    if (addedToday > 0) entries.push({ su: addedToday, at: nowMs })
  }
  if (target.spent_this_month_su !== undefined) {
    const added = roundSu(target.spent_this_month_su - thisMonth - addedToday)
    if (added < 0)
      return {
        ok: false,
        problem: `spent_this_month_su is below the month's settled ${roundSu(thisMonth + addedToday)} SU`,
      }
    // Earlier in the month when there is an earlier day; else it lands today as well.
    const at = month.startMs < day.startMs ? month.startMs : nowMs
    if (at === nowMs && target.spent_today_su !== undefined && added > 0)
      return { ok: false, problem: 'on the first day of a month the two totals must be equal' }
    if (added > 0) entries.push({ su: added, at })
  }
  for (const { su, at } of entries) {
    insertLedgerEntry(deps.db, {
      project_id: projectId,
      execution_id: null,
      deployment_id: null,
      session_id: null,
      turn_id: null,
      run_id: null,
      category,
      su,
      settled_at: at,
    })
  }
  return { ok: true }
}
