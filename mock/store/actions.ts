/**
 * Interactive actions and the Projects that have the facility: prepared statements and row <-> record
 * mapping. Lookups are by primary key or by (execution_id, status).
 */
import type { ActionQuestion, ApprovalMaterial } from '../domain/actions.js'
import type { Db } from './db.js'

export type ActionStatus = 'PENDING' | 'RESOLVED' | 'EXPIRED' | 'CANCELED'

export type ActionRecord = {
  id: string
  execution_id: string
  project_id: string
  kind: 'APPROVAL' | 'QUESTION'
  status: ActionStatus
  material: ApprovalMaterial | null
  questions: ActionQuestion[] | null
  content_available: boolean
  step_index: number
  time_left_ms: number | null
  created_at: number
  expires_at: number
  resolved_at: number | null
  resolution: Record<string, unknown> | null
}

/** An actions row as stored (JSON columns unparsed). */
export type ActionRow = Omit<
  ActionRecord,
  'material' | 'questions' | 'content_available' | 'resolution'
> & {
  material_json: string | null
  questions_json: string | null
  content_available: number
  resolution_json: string | null
}

const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T))

const toAction = ({
  material_json,
  questions_json,
  content_available,
  resolution_json,
  ...r
}: ActionRow): ActionRecord => ({
  ...r,
  material: parse<ApprovalMaterial>(material_json),
  questions: parse<ActionQuestion[]>(questions_json),
  content_available: content_available === 1,
  resolution: parse<Record<string, unknown>>(resolution_json),
})

const toRow = (a: ActionRecord) => ({
  id: a.id,
  execution_id: a.execution_id,
  project_id: a.project_id,
  kind: a.kind,
  status: a.status,
  material_json: a.material === null ? null : JSON.stringify(a.material),
  questions_json: a.questions === null ? null : JSON.stringify(a.questions),
  content_available: a.content_available ? 1 : 0,
  step_index: a.step_index,
  time_left_ms: a.time_left_ms,
  created_at: a.created_at,
  expires_at: a.expires_at,
  resolved_at: a.resolved_at,
  resolution_json: a.resolution === null ? null : JSON.stringify(a.resolution),
})

export function insertAction(db: Db, a: ActionRecord): void {
  db.stmt(
    `INSERT INTO actions (id, execution_id, project_id, kind, status, material_json, questions_json, content_available,
       step_index, time_left_ms, created_at, expires_at, resolved_at, resolution_json)
     VALUES (@id, @execution_id, @project_id, @kind, @status, @material_json, @questions_json, @content_available,
       @step_index, @time_left_ms, @created_at, @expires_at, @resolved_at, @resolution_json)`,
  ).run(toRow(a))
}

/** Writes the mutable fields back (status, material, availability, resolution). */
export function saveAction(db: Db, a: ActionRecord): void {
  db.stmt(
    `UPDATE actions SET status = @status, material_json = @material_json, content_available = @content_available,
       resolved_at = @resolved_at, resolution_json = @resolution_json WHERE id = @id`,
  ).run(toRow(a))
}

export function getAction(db: Db, id: string): ActionRecord | undefined {
  const row = db.stmt('SELECT * FROM actions WHERE id = ?').get(id) as ActionRow | undefined
  return row && toAction(row)
}

/** The pending actions of an execution, oldest first (at most one in the mock: the script pauses). */
export function pendingActions(db: Db, executionId: string): ActionRecord[] {
  return (
    db
      .stmt(
        "SELECT * FROM actions WHERE execution_id = ? AND status = 'PENDING' ORDER BY created_at, rowid",
      )
      .all(executionId) as ActionRow[]
  ).map(toAction)
}

/** Whether the Project has the interactive-action facility (fixture switch or control toggle). */
export function interactiveActionsEnabled(db: Db, projectId: string): boolean {
  return (
    db.stmt('SELECT 1 FROM interactive_action_projects WHERE project_id = ?').get(projectId) !==
    undefined
  )
}

export function setInteractiveActions(db: Db, projectId: string, enabled: boolean): void {
  if (enabled)
    db.stmt('INSERT OR IGNORE INTO interactive_action_projects (project_id) VALUES (?)').run(
      projectId,
    )
  else db.stmt('DELETE FROM interactive_action_projects WHERE project_id = ?').run(projectId)
}

/** Due time (ms) of an execution's pending execution time-limit timer, if any. */
export function timeLimitDueAt(db: Db, executionId: string): number | undefined {
  const row = db
    .stmt("SELECT due_at FROM timers WHERE subject = ? AND kind = 'execution.time-limit'")
    .get(executionId) as { due_at: number } | undefined
  return row?.due_at
}
