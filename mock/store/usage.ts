/**
 * The SU ledger and the usage sums built on it: settled rows by category (usage_ledger), and the open
 * executions' settled-so-far and reserved SU (executions table). Window sums use the (project_id, settled_at)
 * index; filter sums use the per-id indexes, so nothing scans the whole ledger.
 */
import type { CostCategory } from '../domain/budgets.js'
import type { Db } from './db.js'

export type LedgerEntry = {
  project_id: string
  execution_id: string | null
  deployment_id: string | null
  session_id: string | null
  turn_id: string | null
  run_id: string | null
  category: CostCategory
  su: number
  settled_at: number
}

export function insertLedgerEntry(db: Db, e: LedgerEntry): void {
  db.stmt(
    `INSERT INTO usage_ledger (project_id, execution_id, deployment_id, session_id, turn_id, run_id, category, su, settled_at)
     VALUES (@project_id, @execution_id, @deployment_id, @session_id, @turn_id, @run_id, @category, @su, @settled_at)`,
  ).run(e)
}

/** Settled SU of a Project in [startMs, endMs). */
export function settledInWindow(db: Db, projectId: string, startMs: number, endMs: number): number {
  return (
    db
      .stmt(
        'SELECT COALESCE(SUM(su), 0) AS n FROM usage_ledger WHERE project_id = ? AND settled_at >= ? AND settled_at < ?',
      )
      .get(projectId, startMs, endMs) as { n: number }
  ).n
}

/**
 * What a usage read is about: the whole Project when empty, else what matches every id given (a Deployment,
 * Session, Turn, Run). A Run also holds the Turns of the Sessions its steps hold (sessions.workflow_run_id).
 */
export type UsageFilter = {
  deployment_id?: string
  session_id?: string
  turn_id?: string
  run_id?: string
}

const FILTER_COLUMNS = ['deployment_id', 'session_id', 'turn_id', 'run_id'] as const

/** Settled SU by category for the filter, within a Project. */
export function settledByCategory(
  db: Db,
  projectId: string,
  filter: UsageFilter,
): Map<string, number> {
  const used = FILTER_COLUMNS.filter((k) => filter[k] !== undefined)
  const where = ['project_id = ?', ...used.map((k) => `${k} = ?`)].join(' AND ')
  const rows = db
    .stmt(`SELECT category, SUM(su) AS su FROM usage_ledger WHERE ${where} GROUP BY category`)
    .all(projectId, ...used.map((k) => filter[k])) as { category: string; su: number }[]
  return new Map(rows.map((r) => [r.category, r.su]))
}

/**
 * An open (not yet settled) execution's SU: spent so far (settled calls) and still reserved (max_su - spent;
 * nothing while it waits for a Project slot).
 */
export type OpenSpend = { id: string; spent_su: number; reserved_su: number }

/** The open executions matching the filter, within a Project. */
export function openSpend(db: Db, projectId: string, filter: UsageFilter): OpenSpend[] {
  const clauses = ['e.project_id = ?', 'e.terminal = 0']
  const params: string[] = [projectId]
  if (filter.deployment_id !== undefined) {
    clauses.push('e.deployment_id = ?')
    params.push(filter.deployment_id)
  }
  if (filter.session_id !== undefined) {
    clauses.push('e.session_id = ?')
    params.push(filter.session_id)
  }
  if (filter.turn_id !== undefined) {
    clauses.push("e.id = ? AND e.kind = 'TURN'")
    params.push(filter.turn_id)
  }
  if (filter.run_id !== undefined) {
    clauses.push(
      '(e.id = ? OR e.session_id IN (SELECT s.id FROM sessions s WHERE s.workflow_run_id = ?))',
    )
    params.push(filter.run_id, filter.run_id)
  }
  return db
    .stmt(
      `SELECT e.id AS id, e.spent_su AS spent_su,
         CASE WHEN e.admitted_at IS NULL THEN 0 ELSE MAX(e.max_su - e.spent_su, 0) END AS reserved_su
       FROM executions e WHERE ${clauses.join(' AND ')}`,
    )
    .all(...params) as OpenSpend[]
}

/**
 * SU committed by a Project's running executions: each will settle at most its max_su (spent + reserved). An
 * execution waiting for a Project slot reserves nothing yet (BUD-007: reserved when it starts).
 */
export function openCommitted(db: Db, projectId: string): number {
  return (
    db
      .stmt(
        'SELECT COALESCE(SUM(MAX(max_su, spent_su)), 0) AS n FROM executions WHERE project_id = ? AND terminal = 0 AND admitted_at IS NOT NULL',
      )
      .get(projectId) as { n: number }
  ).n
}

/**
 * What an acceptance's budget check reads, in one statement: openCommitted and the settled SU of the UTC day and
 * month windows ([startMs, endMs) each), by the same sums as openCommitted and settledInWindow.
 */
export function budgetSpend(
  db: Db,
  projectId: string,
  day: { startMs: number; endMs: number },
  month: { startMs: number; endMs: number },
): { committedSu: number; daySu: number; monthSu: number } {
  // One aggregate row (the running executions' sum) with the windows' sums beside it; ? in text order.
  return db
    .stmt(
      `SELECT COALESCE(SUM(MAX(max_su, spent_su)), 0) AS committedSu,
         (SELECT COALESCE(SUM(su), 0) FROM usage_ledger
           WHERE project_id = ? AND settled_at >= ? AND settled_at < ?) AS daySu,
         (SELECT COALESCE(SUM(su), 0) FROM usage_ledger
           WHERE project_id = ? AND settled_at >= ? AND settled_at < ?) AS monthSu
       FROM executions WHERE project_id = ? AND terminal = 0 AND admitted_at IS NOT NULL`,
    )
    .get(projectId, day.startMs, day.endMs, projectId, month.startMs, month.endMs, projectId) as {
    committedSu: number
    daySu: number
    monthSu: number
  }
}

const DAY_MS = 86_400_000

/**
 * Upper bounds (in SU) of a Project's settled SU in the UTC day and month windows, from usage_days (schema
 * 255-usage-days.sql): a row per day, so the month costs at most 31 rows however much the month settled. The
 * windows are whole UTC days. A kept read (Db.cached): usage_days changes only when an execution settles, so
 * the acceptances between two settlements read it once.
 */
export function settledBounds(
  db: Db,
  projectId: string,
  day: { startMs: number; endMs: number },
  month: { startMs: number; endMs: number },
): { dayBoundSu: number; monthBoundSu: number } {
  const r = db
    .cached(
      `SELECT (SELECT COALESCE(SUM(su_micro), 0) FROM usage_days WHERE project_id = ? AND day = ?) AS dayMicro,
         (SELECT COALESCE(SUM(su_micro), 0) FROM usage_days
           WHERE project_id = ? AND day >= ? AND day < ?) AS monthMicro`,
    )
    .get(
      projectId,
      day.startMs / DAY_MS,
      projectId,
      month.startMs / DAY_MS,
      month.endMs / DAY_MS,
    ) as {
    dayMicro: number
    monthMicro: number
  }
  return { dayBoundSu: r.dayMicro / 1e6, monthBoundSu: r.monthMicro / 1e6 }
}

/** Sets a Project's daily and/or monthly budget (control API); false when there is no such Project. */
export function setProjectBudgets(
  db: Db,
  projectId: string,
  budgets: { daily_budget_su?: number; monthly_budget_su?: number },
): boolean {
  if (!db.stmt('SELECT 1 FROM projects WHERE id = ?').get(projectId)) return false
  if (budgets.daily_budget_su !== undefined)
    db.stmt('UPDATE projects SET daily_budget_su = ? WHERE id = ?').run(
      budgets.daily_budget_su,
      projectId,
    )
  if (budgets.monthly_budget_su !== undefined)
    db.stmt('UPDATE projects SET monthly_budget_su = ? WHERE id = ?').run(
      budgets.monthly_budget_su,
      projectId,
    )
  return true
}
