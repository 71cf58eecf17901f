/**
 * Sessions, executions (Turns; Runs share the table) and output items: prepared statements and row <-> domain
 * mapping. Every lookup is by primary key or an index, so request work stays O(1) in the store size: a Session
 * or an execution by id through the map of its table's ids (row-ids.ts) to its seq, the row's primary key.
 */
import type { components, ErrorCode } from '../../spec/index.js'
import type { RunStepState } from '../domain/run-steps.js'
import type { ScenarioStep } from '../execution/scenarios.js'
import type { Db } from './db.js'
import { columnsExcept } from './rows.js'
import { memoizeFrozen } from '../util/memo.js'
import { listItemBytes } from '../domain/list-limits.js'
import type { OutputContract } from './deployments.js'
import { projectLoads, type ProjectLoad } from './project-load.js'
import { executionRows, sessionRows } from './row-ids.js'
import { noteCarrier, takeOfferedReceipt } from './carried-receipts.js'

export type SessionRecord = {
  id: string
  /** The Session's number in creation order (set by insertSession): its executions are indexed by it. */
  seq: number
  project_id: string
  deployment_id: string
  status: 'ACTIVE' | 'CLOSED'
  deleted_at: number | null
  metadata: Record<string, string>
  created_at: number
  last_activity_at: number
  workflow_run_id: string | null
}

/** An execution's status: RunStatus (a Turn's are the same less PARTIALLY_SUCCEEDED, which only a Run reaches). */
export type ExecutionStatus = components['schemas']['RunStatus']

export type ExecutionError = {
  code: ErrorCode
  message: string
  retryable: false
  details?: Record<string, unknown>
}

/** What a Run freezes at acceptance (Run request rule 3): deadline, retention, steps and result contract. */
export type RunFacts = {
  /** created_at + run_seconds (ms): the whole-Run deadline. */
  deadline_at: number
  run_seconds: number
  retention_days: number
  /** Unique steps of the published version (progress.total). */
  progress_total: number
  allows_partial: boolean
  outputs: OutputContract[]
  file_ids: string[]
}

export type ExecutionRecord = {
  id: string
  seq: number
  kind: 'TURN' | 'RUN'
  project_id: string
  api_key: string
  deployment_id: string | null
  session_id: string | null
  /** Its Session's seq (null for a Run): the key of the executions_session index. */
  session_seq: number | null
  workflow_id: string | null
  published_version: number | null
  status: ExecutionStatus
  error: ExecutionError | null
  scenario: string
  steps: readonly ScenarioStep[]
  input: unknown
  metadata: Record<string, string>
  execution_seconds: number
  queue_seconds: number
  max_su: number
  spent_su: number
  usage_status: 'PENDING' | 'FINAL'
  created_at: number
  admitted_at: number | null
  started_at: number | null
  completed_at: number | null
  terminal: boolean
  /**
   * TIME-001: when the execution expires if it has not started (created_at plus its queue window), and the
   * timer seq its queue timeout took at acceptance: the key (due_at, seq) of the Project's queue-timeout
   * timer while it is the Project's next (execution/queue-timeouts.ts). Null on executions that ended before
   * schema 280.
   */
  queue_due_at: number | null
  queue_timer_seq: number | null
  /** Runs only: the facts frozen at acceptance (null for a Turn). */
  run?: RunFacts | null
  /** Runs only: unique steps done (progress.completed). */
  progress_completed?: number
  /** Runs whose script marks steps: the open step, the steps done, the later steps' queue waits. */
  run_steps?: RunStepState | null
  /** Runs only: when a delete was accepted (reads blocked from then on). */
  deleted_at?: number | null
  /** Runs only: how a cancel ends when it cannot confirm an external effect (EXTERNAL_EFFECT_UNKNOWN). */
  cancel_outcome?: string | null
}

type SessionRow = Omit<SessionRecord, 'metadata'> & { metadata_json: string }
/** An executions row as stored (JSON columns unparsed). */
export type ExecutionRow = Omit<
  ExecutionRecord,
  'error' | 'steps' | 'input' | 'metadata' | 'terminal' | 'run' | 'run_steps'
> & {
  run_json: string | null
  run_steps_json: string | null
  error_json: string | null
  steps_json: string
  input_json: string
  metadata_json: string
  terminal: number
}

const SESSION_DERIVED = new Set(['metadata_json'])
const toSession = (r: SessionRow): SessionRecord => {
  const s = columnsExcept(r, SESSION_DERIVED)
  s.metadata = JSON.parse(r.metadata_json) as Record<string, string>
  return s as SessionRecord
}

const EXECUTION_DERIVED = new Set([
  'error_json',
  'steps_json',
  'input_json',
  'metadata_json',
  'terminal',
  'run_json',
  'run_steps_json',
  // The receipt the row carries (schema 330) is read by store/idempotency.ts, not part of the execution.
  'receipt_key',
  'receipt_fingerprint',
  'receipt_expires_at',
])
const toExecution = (r: ExecutionRow): ExecutionRecord => {
  const e = columnsExcept(r, EXECUTION_DERIVED)
  e.run = r.run_json === null ? null : (JSON.parse(r.run_json) as RunFacts)
  e.run_steps = r.run_steps_json === null ? null : (JSON.parse(r.run_steps_json) as RunStepState)
  e.error = r.error_json === null ? null : (JSON.parse(r.error_json) as ExecutionError)
  e.steps = JSON.parse(r.steps_json) as ScenarioStep[]
  e.input = JSON.parse(r.input_json) as unknown
  e.metadata = JSON.parse(r.metadata_json) as Record<string, string>
  e.terminal = r.terminal === 1
  return e as ExecutionRecord
}

/**
 * Stores a new Session and sets its seq: its rowid (the largest plus one), read back as the last insert rowid
 * (as insertExecution does for an execution's seq).
 */
export function insertSession(db: Db, s: SessionRecord): void {
  const info = db
    .stmt(
      `INSERT INTO sessions (id, project_id, deployment_id, status, deleted_at, metadata_json, created_at, last_activity_at, workflow_run_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      s.id,
      s.project_id,
      s.deployment_id,
      s.status,
      s.deleted_at,
      JSON.stringify(s.metadata),
      s.created_at,
      s.last_activity_at,
      s.workflow_run_id,
    )
  s.seq = Number(info.lastInsertRowid)
  sessionRows(db).add(s.id, s.seq)
}

/**
 * One Session by its seq and id (the id checked in the row, row-ids.ts): one SQL text for getSession and
 * viewSession, so both read the same kept rows.
 */
const SESSION_BY_ID = 'SELECT * FROM sessions WHERE seq = ? AND id = ?'

export function getSession(db: Db, id: string): SessionRecord | undefined {
  const seq = sessionRows(db).seqOf(id)
  return seq === undefined ? undefined : db.cached(SESSION_BY_ID).record(toSession, seq, id)
}

/** getSession for a caller that only reads the record: while it is kept, the kept (frozen) record, no copy. */
export function viewSession(db: Db, id: string): Readonly<SessionRecord> | undefined {
  const seq = sessionRows(db).seqOf(id)
  return seq === undefined ? undefined : db.cached(SESSION_BY_ID).view(toSession, seq, id)
}

export function updateSession(
  db: Db,
  id: string,
  patch: Partial<Pick<SessionRecord, 'status' | 'deleted_at' | 'last_activity_at'>>,
): void {
  const seq = sessionRows(db).seqOf(id)
  if (seq === undefined) return
  for (const [column, value] of Object.entries(patch)) {
    db.stmt(`UPDATE sessions SET ${column} = ? WHERE seq = ? AND id = ?`).run(value, seq, id)
  }
}

/**
 * An execution's steps as stored: a built-in scenario's bound steps are one frozen array shared by every
 * execution that follows it (nextScenario), so their JSON is made once.
 */
const stepsJson = memoizeFrozen((steps: readonly ScenarioStep[]) => JSON.stringify(steps))

/**
 * Stores a new execution and sets its seq (the caller's record is the one kept: a literal of every field,
 * which V8 builds in one step, where copying a record into another takes its slow path per property). A new
 * execution is QUEUED, not admitted, and has spent nothing: those columns are written as the statement's
 * constants (each bound value costs a conversion), and a record that says otherwise is a programming error.
 */
export function insertExecution(db: Db, e: ExecutionRecord): void {
  if (
    e.status !== 'QUEUED' ||
    e.error !== null ||
    e.spent_su !== 0 ||
    e.usage_status !== 'PENDING' ||
    e.admitted_at !== null ||
    e.started_at !== null ||
    e.completed_at !== null ||
    e.terminal
  )
    throw new Error(`insertExecution: ${e.id} is not a new execution (QUEUED, not admitted)`)
  // The receipt of the request creating it, when the route offered one (store/carried-receipts.ts).
  const receipt = takeOfferedReceipt(db)
  projectLoads(db).write(e, () => {
    // seq: the rowid (acceptance order: SQLite gives a new row the largest rowid plus one), read back as the
    // last insert rowid: RETURNING would keep its row in a temporary b-tree, built and torn down on every insert.
    const info = db
      .stmt(
        `INSERT INTO executions (id, kind, project_id, api_key, deployment_id, session_id, session_seq, workflow_id, published_version, status, error_json,
         scenario, steps_json, input_json, metadata_json, execution_seconds, queue_seconds, max_su, spent_su, usage_status,
         created_at, admitted_at, started_at, completed_at, terminal, run_json, queue_due_at, queue_timer_seq,
         receipt_key, receipt_fingerprint, receipt_expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'QUEUED', NULL, ?, ?, ?, ?, ?, ?, ?, 0, 'PENDING', ?, NULL, NULL, NULL, 0, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        e.id,
        e.kind,
        e.project_id,
        e.api_key,
        e.deployment_id,
        e.session_id,
        e.session_seq,
        e.workflow_id,
        e.published_version,
        e.scenario,
        stepsJson(e.steps),
        JSON.stringify(e.input ?? null),
        JSON.stringify(e.metadata),
        e.execution_seconds,
        e.queue_seconds,
        e.max_su,
        e.created_at,
        e.run ? JSON.stringify(e.run) : null,
        e.queue_due_at,
        e.queue_timer_seq,
        receipt?.key ?? null,
        receipt?.fingerprint ?? null,
        receipt?.expires_at ?? null,
      )
    e.seq = Number(info.lastInsertRowid)
  })
  executionRows(db).add(e.id, e.seq)
  if (receipt) noteCarrier(db, { kind: e.kind, id: e.id, seq: e.seq, session_id: e.session_id })
}

/**
 * One execution by its seq and id (the id checked in the row, row-ids.ts): one SQL text for getExecution and
 * viewExecution, so both read the same kept rows.
 */
const EXECUTION_BY_ID = 'SELECT * FROM executions WHERE seq = ? AND id = ?'

export function getExecution(db: Db, id: string): ExecutionRecord | undefined {
  const seq = executionRows(db).seqOf(id)
  return seq === undefined ? undefined : db.cached(EXECUTION_BY_ID).record(toExecution, seq, id)
}

/** getExecution for a caller that only reads the record: while it is kept, the kept (frozen) record, no copy. */
export function viewExecution(db: Db, id: string): Readonly<ExecutionRecord> | undefined {
  const seq = executionRows(db).seqOf(id)
  return seq === undefined ? undefined : db.cached(EXECUTION_BY_ID).view(toExecution, seq, id)
}

/** Writes the mutable fields of an execution back. */
export function saveExecution(db: Db, e: ExecutionRecord): void {
  projectLoads(db).write(e, () => updateExecution(db, e))
}

function updateExecution(db: Db, e: ExecutionRecord): void {
  db.stmt(
    `UPDATE executions SET status = ?, error_json = ?, spent_su = ?, usage_status = ?, admitted_at = ?, started_at = ?,
       completed_at = ?, terminal = ?, progress_completed = ?, run_steps_json = ?, deleted_at = ?, cancel_outcome = ?,
       queue_timer_seq = ?
     WHERE seq = ? AND id = ?`,
  ).run(
    e.status,
    e.error === null ? null : JSON.stringify(e.error),
    e.spent_su,
    e.usage_status,
    e.admitted_at,
    e.started_at,
    e.completed_at,
    e.terminal ? 1 : 0,
    e.progress_completed ?? 0,
    e.run_steps ? JSON.stringify(e.run_steps) : null,
    e.deleted_at ?? null,
    e.cancel_outcome ?? null,
    e.queue_timer_seq,
    e.seq,
    e.id,
  )
}

/**
 * The Project's not yet started execution (QUEUED) whose queue timeout comes first, in timer order (due_at,
 * seq), searched among the Project's open executions (at most its slots and its waiting cap); with `after`,
 * the first whose key comes after that one.
 */
export function firstQueuedOf(
  db: Db,
  projectId: string,
  after: { due_at: number; seq: number } = { due_at: -Infinity, seq: 0 },
): { id: string; queue_due_at: number; queue_timer_seq: number } | undefined {
  return db
    .stmt(
      `SELECT id, queue_due_at, queue_timer_seq FROM executions
       WHERE project_id = ? AND terminal = 0 AND status = 'QUEUED' AND queue_timer_seq IS NOT NULL
         AND (queue_due_at > ? OR (queue_due_at = ? AND queue_timer_seq > ?))
       ORDER BY queue_due_at, queue_timer_seq LIMIT 1`,
    )
    .get(projectId, after.due_at, after.due_at, after.seq) as
    { id: string; queue_due_at: number; queue_timer_seq: number } | undefined
}

/**
 * Open (not terminal) Runs of a Workflow, oldest first (stopping a workflow cancels them), searched among its
 * Project's open executions.
 */
export function openRunsOfWorkflow(db: Db, workflowId: string): ExecutionRecord[] {
  return (
    db
      .stmt(
        "SELECT * FROM executions WHERE project_id = (SELECT project_id FROM workflows WHERE id = @id) AND terminal = 0 AND workflow_id = @id AND kind = 'RUN' ORDER BY seq",
      )
      .all({ id: workflowId }) as ExecutionRow[]
  ).map(toExecution)
}

/** The newest execution of a Session (its current or last Turn). */
export function latestTurnOfSession(db: Db, sessionId: string): ExecutionRecord | undefined {
  const seq = sessionRows(db).seqOf(sessionId)
  if (seq === undefined) return undefined
  const row = db
    .stmt(
      'SELECT * FROM executions WHERE session_seq = (SELECT seq FROM sessions WHERE seq = ? AND id = ?) ORDER BY seq DESC LIMIT 1',
    )
    .get(seq, sessionId) as ExecutionRow | undefined
  return row && toExecution(row)
}

/** Turn ids of a Session in order. */
export function turnIdsOfSession(db: Db, sessionId: string): string[] {
  const seq = sessionRows(db).seqOf(sessionId)
  if (seq === undefined) return []
  return (
    db
      .stmt(
        'SELECT id FROM executions WHERE session_seq = (SELECT seq FROM sessions WHERE seq = ? AND id = ?) ORDER BY seq',
      )
      .all(seq, sessionId) as { id: string }[]
  ).map((r) => r.id)
}

/** Executions of a Project holding a slot (admitted, not ended). */
export function countAdmitted(db: Db, projectId: string): number {
  return (
    db
      .stmt(
        'SELECT COUNT(*) AS n FROM executions WHERE project_id = ? AND terminal = 0 AND admitted_at IS NOT NULL',
      )
      .get(projectId) as { n: number }
  ).n
}

/** Accepted executions waiting for a slot, oldest first. */
export function waitingExecutions(db: Db, projectId: string, limit: number): ExecutionRecord[] {
  return (
    db
      .stmt(
        'SELECT * FROM executions WHERE project_id = ? AND terminal = 0 AND admitted_at IS NULL ORDER BY seq LIMIT CAST(? AS INTEGER)',
      )
      .all(projectId, limit) as ExecutionRow[]
  ).map(toExecution)
}

/** A Run: an execution of kind RUN with its Run facts, its workflow and the published version it runs. */
export type RunRecord = ExecutionRecord & {
  kind: 'RUN'
  run: RunFacts
  workflow_id: string
  published_version: number
}

/** A Turn: an execution of kind TURN, in a Session. */
export type TurnRecord = ExecutionRecord & { kind: 'TURN'; session_id: string }

/** An output item as stored and shown (OutputItem: TextOutput, JsonOutput, FileOutput or UrlOutput). */
export type OutputItem = components['schemas']['OutputItem']

export function insertOutput(db: Db, executionId: string, item: OutputItem): void {
  const position = (
    db.stmt('SELECT COUNT(*) AS n FROM outputs WHERE execution_id = ?').get(executionId) as {
      n: number
    }
  ).n
  db.stmt('INSERT INTO outputs (id, execution_id, position, item_json) VALUES (?, ?, ?, ?)').run(
    item.id,
    executionId,
    position,
    JSON.stringify(item),
  )
}

/** A page of an execution's outputs after a position. */
export function listOutputs(
  db: Db,
  executionId: string,
  afterPosition: number,
  limit: number,
): { items: OutputItem[]; last: number } {
  const rows = listOutputRows(db, executionId, afterPosition, limit)
  return {
    items: rows.map((r) => r.item),
    last: rows.at(-1)?.position ?? afterPosition,
  }
}

/** Published outputs after a position, with their positions (the cursor of a page). */
export function listOutputRows(
  db: Db,
  executionId: string,
  afterPosition: number,
  limit: number,
): OutputRow[] {
  return db
    .cached(
      'SELECT position, item_json FROM outputs WHERE execution_id = ? AND position > ? ORDER BY position LIMIT CAST(? AS INTEGER)',
    )
    .records(toOutputRow, executionId, afterPosition, limit)
}

/** A published output with its position (the cursor of a page) and the bytes of its JSON in a list. */
export type OutputRow = { position: number; item: OutputItem; bytes: number }

const toOutputRow = (r: { position: number; item_json: string }): OutputRow => ({
  position: r.position,
  item: JSON.parse(r.item_json) as OutputItem,
  bytes: listItemBytes(r.item_json),
})

export function countOutputs(db: Db, executionId: string): number {
  return (
    db.stmt('SELECT COUNT(*) AS n FROM outputs WHERE execution_id = ?').get(executionId) as {
      n: number
    }
  ).n
}

export type { ProjectLoad }

/** A Project's open (not terminal) executions, as counted in memory (store/project-load.ts). */
export function projectLoad(db: Db, projectId: string): ProjectLoad {
  return projectLoads(db).of(projectId)
}

/** SU reserved by a Project's open executions: each holds its max_su less what it already spent. */
export function openReservations(db: Db, projectId: string): number {
  return (
    db
      .stmt(
        'SELECT COALESCE(SUM(max_su - spent_su), 0) AS n FROM executions WHERE project_id = ? AND terminal = 0',
      )
      .get(projectId) as { n: number }
  ).n
}

/** Ids of the internal Sessions held by a Run's workflow steps. */
export function sessionsOfRun(db: Db, runId: string): string[] {
  return (
    db.stmt('SELECT id FROM sessions WHERE workflow_run_id = ?').all(runId) as { id: string }[]
  ).map((r) => r.id)
}

/** Whether an execution (Turn or Run) exists and has not ended (idempotency receipts are kept until it ends). */
export function isExecutionOpen(db: Db, id: string): boolean {
  const seq = executionRows(db).seqOf(id)
  if (seq === undefined) return false
  const row = db.cached('SELECT terminal FROM executions WHERE seq = ? AND id = ?').get(seq, id) as
    { terminal: number } | undefined
  return row !== undefined && row.terminal === 0
}
