/**
 * An execution's life cycle: acceptance (QUEUED, queue timeout, key expiry), admission to one of the Project's
 * 2 slots in acceptance order (Limits > Concurrency), status changes, publication of outputs and the end
 * (usage settled PENDING -> FINAL, total_su = spent, the Project charged, remaining timers canceled, the next
 * waiting execution admitted). Every change is told to the instance's execution listeners (deps.bus).
 */
import type { components, ErrorCode } from '../../spec/index.js'
import type { Deps } from '../deps.js'
import { runEnd } from '../domain/run.js'
import { closeStep, stepStatusAtRunEnd, type StepOutcomeStatus } from '../domain/run-steps.js'
import { getDeployment } from '../store/deployments.js'
import { runEndedFilesExpireAt } from '../domain/retention.js'
import { setExecutionFilesExpiry } from '../store/files.js'
import { chargeProject, getApiKey } from '../store/projects.js'
import { fitsProjectBudget, recordUsage } from './ledger.js'
import {
  countAdmitted,
  insertExecution,
  insertOutput,
  listOutputs,
  saveExecution,
  waitingExecutions,
  type ExecutionRecord,
  type ExecutionStatus,
  type OutputItem,
} from '../store/executions.js'
import type { EndHooks } from './outputs.js'
import { armQueueTimeout, queueDueAt } from './queue-timeouts.js'
import { marksRunSteps } from './scenarios.js'

/** A Project runs at most this many executions at a time. */
export const PROJECT_CONCURRENCY = 2

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set([
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
])

/** True for a terminal status: the OutcomeStatus of an OUTCOME item. */
export const isOutcomeStatus = (s: string): s is components['schemas']['OutcomeStatus'] =>
  TERMINAL_STATUSES.has(s)

/** Something that happened to an execution, for the listeners on the instance's bus (events, actions). */
export type ExecutionEvent =
  | { type: 'status'; execution: ExecutionRecord; from: string }
  | { type: 'output'; execution: ExecutionRecord; item: OutputItem }
  // One step of a Run ended (STEP_OUTCOME): events/mapping.ts appends run.step.completed.
  | { type: 'step'; execution: ExecutionRecord; step_id: string; status: StepOutcomeStatus }
  // A tool call began (public: its name and call id only): events/mapping.ts appends tool.started.
  | { type: 'tool'; execution: ExecutionRecord; tool_name: string; call_id: string }
/** Tells the instance's execution listeners (inside the transaction that makes the change). */
const emit = (deps: Deps, event: ExecutionEvent) => deps.bus.execution.emit(deps, event)

/** What an acceptance decides; the life-cycle fields start the same for every execution (QUEUED, nothing spent). */
export type NewExecution = Omit<
  ExecutionRecord,
  | 'seq'
  | 'status'
  | 'error'
  | 'spent_su'
  | 'usage_status'
  | 'created_at'
  | 'admitted_at'
  | 'started_at'
  | 'completed_at'
  | 'terminal'
  | 'queue_due_at'
  | 'queue_timer_seq'
>

/**
 * Stores a new QUEUED execution, admits it when a Project slot is free and arms its queue timeout.
 * `running`: the Project's executions holding a slot now (the caller counted them for its checks).
 */
export function acceptExecution<E extends NewExecution>(
  deps: Deps,
  e: E,
  running: number,
): ExecutionRecord & E {
  const { db, clock, scheduler } = deps
  const nowMs = clock.nowMs()
  // Every field in one literal (not { ...fixed, ...e }: Node 20 (V8 11) copies a spread's properties one by
  // one on a slow path, a new shape for each). seq is set by the insert.
  const record: ExecutionRecord = {
    id: e.id,
    seq: 0,
    kind: e.kind,
    project_id: e.project_id,
    api_key: e.api_key,
    deployment_id: e.deployment_id,
    session_id: e.session_id,
    session_seq: e.session_seq,
    workflow_id: e.workflow_id,
    published_version: e.published_version,
    status: 'QUEUED',
    error: null,
    scenario: e.scenario,
    steps: e.steps,
    input: e.input,
    metadata: e.metadata,
    execution_seconds: e.execution_seconds,
    queue_seconds: e.queue_seconds,
    max_su: e.max_su,
    spent_su: 0,
    usage_status: 'PENDING',
    created_at: nowMs,
    admitted_at: null,
    started_at: null,
    completed_at: null,
    terminal: false,
    run: e.run ?? null,
    progress_completed: e.progress_completed ?? 0,
    run_steps: e.run_steps ?? null,
    deleted_at: e.deleted_at ?? null,
    cancel_outcome: e.cancel_outcome ?? null,
    queue_due_at: queueDueAt({ kind: e.kind, queue_seconds: e.queue_seconds, created_at: nowMs }),
    queue_timer_seq: null,
  }
  // The queue timeout's seq is taken where its timer used to be scheduled: after the script's steps of an
  // execution admitted at once (so that a step due at the deadline still comes first), and it is stored with
  // the execution (in the insert, or in the admission's save).
  if (running < PROJECT_CONCURRENCY) {
    insertExecution(db, record)
    takeSlot(deps, record, nowMs)
    record.queue_timer_seq = scheduler.reserveSeq()
    saveExecution(db, record)
  } else {
    record.queue_timer_seq = scheduler.reserveSeq()
    insertExecution(db, record)
  }
  armQueueTimeout(deps, record)
  // STATE-019: the key's expiry on the clock cancels the execution with AUTHORIZATION_REVOKED.
  const keyExpiresAt = getApiKey(db, record.api_key)?.expires_at
  if (keyExpiresAt != null) {
    scheduler.schedule(
      'access.key-expiry',
      keyExpiresAt,
      { key: record.api_key },
      { subject: record.id },
    )
  }
  // E is NewExecution narrowed (a Turn's or a Run's kind and fields): every field of it was copied from e.
  return record as ExecutionRecord & E
}

/** Takes a Project slot: the script's steps become timers, `at` seconds after admission. */
function admit(deps: Deps, e: ExecutionRecord, nowMs: number): void {
  takeSlot(deps, e, nowMs)
  saveExecution(deps.db, e)
}

/** admit without the save (the caller saves the execution). */
function takeSlot(deps: Deps, e: ExecutionRecord, nowMs: number): void {
  e.admitted_at = nowMs
  e.steps.forEach((step, index) => {
    deps.scheduler.schedule(
      'execution.step',
      nowMs + step.at * 1000,
      { id: e.id, index },
      { subject: e.id },
    )
  })
}

/** Ends an execution with a terminal status (and error code), settling usage and freeing its slot. */
export function finishExecution(
  deps: Deps,
  e: ExecutionRecord,
  status: ExecutionStatus,
  code?: ErrorCode,
  message?: string,
): void {
  const { db, clock, scheduler } = deps
  const nowMs = clock.nowMs()
  const from = e.status
  e.status = status
  e.terminal = true
  e.completed_at = nowMs
  const stepsEnded = e.run ? endRunSteps(e, status) : []
  e.error = code ? { code, message: message ?? code, retryable: false } : null
  e.usage_status = 'FINAL'
  saveExecution(db, e)
  chargeProject(db, e.project_id, e.spent_su)
  recordUsage(deps, e) // SU ledger: GET /v1/usage and the budget windows (execution/ledger.ts)
  scheduler.cancelSubject(e.id)
  // RET-009: a Run's files (inputs and results) expire with its content from now on.
  if (e.run)
    setExecutionFilesExpiry(
      db,
      e.id,
      runEndedFilesExpireAt(nowMs, e.run.deadline_at, e.run.retention_days),
    )
  // RUN-011: a Run's outputs were held back; they are published together with the terminal status.
  if (e.kind === 'RUN') {
    for (const item of listOutputs(db, e.id, -1, 1000).items)
      emit(deps, { type: 'output', execution: e, item })
  }
  for (const step of stepsEnded) emit(deps, { type: 'step', execution: e, ...step })
  emit(deps, { type: 'status', execution: e, from })
  admitWaiting(deps, e.project_id, nowMs)
}

/**
 * The steps a Run's end ends (told to the listeners before its outcome): a step a script left open ends with
 * the Run's status. RUN-007: a Run that finished its work has done every unique step; a script without step
 * marks has its remaining steps (step-<n>) done with it.
 */
function endRunSteps(
  e: ExecutionRecord,
  status: ExecutionStatus,
): { step_id: string; status: StepOutcomeStatus }[] {
  const ended: { step_id: string; status: StepOutcomeStatus }[] = []
  const closed = e.run_steps ? closeStep(e.run_steps, stepStatusAtRunEnd(status)) : undefined
  if (closed) {
    e.run_steps = closed.state
    ended.push({ step_id: closed.stepId, status: stepStatusAtRunEnd(status) })
  }
  const marked = marksRunSteps(e.steps)
  if (marked) e.progress_completed = e.run_steps?.done.length ?? 0
  if (e.run && (status === 'SUCCEEDED' || status === 'PARTIALLY_SUCCEEDED')) {
    const before = e.progress_completed ?? 0
    e.progress_completed = e.run.progress_total
    if (!marked)
      for (let n = before + 1; n <= e.run.progress_total; n++)
        ended.push({ step_id: `step-${n}`, status: 'SUCCEEDED' })
  }
  return ended
}

/** Seconds from a Run cancel request until its child executions are confirmed ended (assumed: 2 s). */
export const RUN_CANCEL_CONFIRM_S = 2

/**
 * STATE-008, STATE-009: a Run moves to CANCEL_REQUESTED and does no more work; RUN_CANCEL_CONFIRM_S later its
 * child executions are confirmed ended (run.cancel-confirmed). Its deadline still applies meanwhile.
 */
export function requestRunCancel(deps: Deps, e: ExecutionRecord): void {
  // Its queue timeout is the Project's timer (execution/queue-timeouts.ts): it stays, and does nothing for
  // an execution that is no longer QUEUED.
  for (const kind of [
    'execution.step',
    'execution.time-limit',
    'run.step-run',
    'run.step-queue-timeout',
  ])
    deps.scheduler.cancelSubject(e.id, kind)
  setStatus(deps, e, 'CANCEL_REQUESTED')
  deps.scheduler.schedule(
    'run.cancel-confirmed',
    deps.clock.nowMs() + RUN_CANCEL_CONFIRM_S * 1000,
    { id: e.id },
    { subject: e.id },
  )
}

/** Admits waiting executions of a Project while slots are free, oldest first. */
function admitWaiting(deps: Deps, projectId: string, nowMs: number): void {
  const free = PROJECT_CONCURRENCY - countAdmitted(deps.db, projectId)
  if (free <= 0) return
  // BUD-003, BUD-007: a waiting execution reserves its max_su when it starts; first come, first served, so
  // one whose max_su does not fit the Project's budget now keeps waiting (and those behind it).
  for (const next of waitingExecutions(deps.db, projectId, free)) {
    if (!fitsProjectBudget(deps, projectId, next.max_su)) return
    admit(deps, next, nowMs)
  }
}

/** Moves a live execution to another non-terminal status and tells the listeners. */
export function setStatus(deps: Deps, e: ExecutionRecord, status: ExecutionStatus): void {
  const from = e.status
  e.status = status
  saveExecution(deps.db, e)
  emit(deps, { type: 'status', execution: e, from })
}

/** Stores an output item; a Turn's is announced now, a Run's with its terminal status (RUN-011). */
export function publishOutput(deps: Deps, e: ExecutionRecord, item: OutputItem): void {
  insertOutput(deps.db, e.id, item)
  if (e.kind !== 'RUN') emit(deps, { type: 'output', execution: e, item })
}

/**
 * Ends an execution whose script succeeded, by its result contract: a Run's frozen at acceptance, a Turn's its
 * Deployment's (fixed at publication). STATE-016, ERR-106: a missing required output is FAILED OUTPUT_MISSING;
 * STATE-018, STATE-028: PARTIALLY_SUCCEEDED only for a Run whose workflow allows partial results (a Turn has
 * no such status).
 */
export function endOnOwnTerms(deps: Deps, e: ExecutionRecord): void {
  const contract = e.run
    ? e.run.outputs
    : e.deployment_id === null
      ? []
      : (getDeployment(deps.db, e.deployment_id)?.outputs ?? [])
  const produced = listOutputs(deps.db, e.id, -1, 1000).items.map((o) => ({
    key: o.key,
    error: o.error ?? null,
  }))
  const end = runEnd(contract, e.run?.allows_partial ?? false, produced)
  return end.status === 'FAILED'
    ? finishExecution(deps, e, 'FAILED', end.code, end.message)
    : finishExecution(deps, e, end.status)
}

/** The life-cycle steps the result rules and file preparation end an execution with. */
export const OUTPUT_HOOKS: EndHooks = {
  finish: finishExecution,
  publish: publishOutput,
  end: endOnOwnTerms,
}
