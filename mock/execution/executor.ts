/**
 * The executor: an accepted execution follows its scenario script on the virtual clock. A Project runs 2
 * executions at a time; the others wait QUEUED in acceptance order (Limits > Concurrency). Each script step
 * is a timer (`execution.step`); `execution.queue-timeout` expires one that has not started within
 * queue_seconds (QUEUE_TIMEOUT) and `execution.time-limit` fails one running past execution_seconds
 * (EXECUTION_TIMEOUT). Ending settles usage (PENDING -> FINAL, total_su = spent), charges the Project balance,
 * cancels the execution's remaining timers and admits the next waiting execution.
 */
import type { Deps } from '../deps.js'
import type { TimerKinds } from '../clock/timer-kinds.js'
import { progressAfterStep, runEnd, runQueueWindowS } from '../domain/run.js'
import { openExecutionsOfKey } from '../store/access.js'
import { chargeProject, getApiKey } from '../store/projects.js'
import { recordUsage } from './ledger.js'
import {
  countAdmitted,
  getExecution,
  insertExecution,
  insertOutput,
  listOutputs,
  saveExecution,
  waitingExecutions,
  type ExecutionRecord,
  type OutputItem,
} from '../store/executions.js'
import type { ScenarioStep } from './scenarios.js'
// Result rules and file preparation (execution/outputs.ts).
import { produceOutput, registerOutputTimers, startPreparation } from './outputs.js'
import { registerActionTimers, requireAction } from './actions.js'

/** A Project runs at most this many executions at a time. */
export const PROJECT_CONCURRENCY = 2

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set([
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
])

/** Something that happened to an execution, for listeners (events, webhooks: a later feature). */
export type ExecutionEvent =
  | { type: 'status'; execution: ExecutionRecord; from: string }
  | { type: 'output'; execution: ExecutionRecord; item: OutputItem }
  // Events feature: a Run's unique step done (progress.completed grew), for run.step.completed.
  | { type: 'step'; execution: ExecutionRecord; completed: number }
type Listener = (deps: Deps, event: ExecutionEvent) => void
const listeners: Listener[] = []

/** Subscribes to execution events (called inside the transaction that makes the change). */
export const onExecutionEvent = (listener: Listener): void => {
  listeners.push(listener)
}
const emit = (deps: Deps, event: ExecutionEvent) => {
  for (const l of listeners) l(deps, event)
}

/** Stores a new QUEUED execution, admits it when a Project slot is free and arms its queue timeout. */
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
>

export function acceptExecution(deps: Deps, e: NewExecution): ExecutionRecord {
  const { db, clock, scheduler } = deps
  const record = insertExecution(db, {
    ...e,
    status: 'QUEUED',
    error: null,
    spent_su: 0,
    usage_status: 'PENDING',
    created_at: clock.nowMs(),
    admitted_at: null,
    started_at: null,
    completed_at: null,
    terminal: false,
  })
  if (countAdmitted(db, record.project_id) < PROJECT_CONCURRENCY) admit(deps, record, clock.nowMs())
  // TIME-001: a Run's wait is also bounded by the whole-Run queue total (its one queued step starts at 0).
  const queueS =
    record.kind === 'RUN' ? runQueueWindowS(record.queue_seconds, 0) : record.queue_seconds
  scheduler.schedule(
    'execution.queue-timeout',
    record.created_at + queueS * 1000,
    { id: record.id },
    { subject: record.id },
  )
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
  return record
}

/** Takes a Project slot: the script's steps become timers, `at` seconds after admission. */
function admit(deps: Deps, e: ExecutionRecord, nowMs: number): void {
  e.admitted_at = nowMs
  saveExecution(deps.db, e)
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
  status: string,
  code?: string,
  message?: string,
): void {
  const { db, clock, scheduler } = deps
  const nowMs = clock.nowMs()
  const from = e.status
  e.status = status
  e.terminal = true
  e.completed_at = nowMs
  // RUN-007: a Run that finished its work has done every unique step.
  if (e.run && (status === 'SUCCEEDED' || status === 'PARTIALLY_SUCCEEDED'))
    e.progress_completed = e.run.progress_total
  e.error = code ? { code, message: message ?? code, retryable: false } : null
  e.usage_status = 'FINAL'
  saveExecution(db, e)
  chargeProject(db, e.project_id, e.spent_su)
  recordUsage(deps, e) // SU ledger: GET /v1/usage and the budget windows (execution/ledger.ts)
  scheduler.cancelSubject(e.id)
  // RUN-011: a Run's outputs were held back; they are published together with the terminal status.
  if (e.kind === 'RUN') {
    for (const item of listOutputs(db, e.id, -1, 1000).items)
      emit(deps, { type: 'output', execution: e, item })
  }
  emit(deps, { type: 'status', execution: e, from })
  admitWaiting(deps, e.project_id, nowMs)
}

/** Seconds from a Run cancel request until its child executions are confirmed ended (assumed: 2 s). */
export const RUN_CANCEL_CONFIRM_S = 2

/**
 * STATE-008, STATE-009: a Run moves to CANCEL_REQUESTED and does no more work; RUN_CANCEL_CONFIRM_S later its
 * child executions are confirmed ended (run.cancel-confirmed). Its deadline still applies meanwhile.
 */
export function requestRunCancel(deps: Deps, e: ExecutionRecord): void {
  for (const kind of ['execution.step', 'execution.queue-timeout', 'execution.time-limit'])
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
  for (const next of waitingExecutions(deps.db, projectId, free)) admit(deps, next, nowMs)
}

/** Moves a live execution to another non-terminal status and tells the listeners. */
export function setStatus(deps: Deps, e: ExecutionRecord, status: string): void {
  const from = e.status
  e.status = status
  saveExecution(deps.db, e)
  emit(deps, { type: 'status', execution: e, from })
}

/** Stores an output item; a Turn's is announced now, a Run's with its terminal status (RUN-011). */
function publishOutput(deps: Deps, e: ExecutionRecord, item: OutputItem): void {
  insertOutput(deps.db, e.id, item)
  if (e.kind !== 'RUN') emit(deps, { type: 'output', execution: e, item })
}

/** Ends an execution whose script succeeded: a Turn SUCCEEDED, a Run by its frozen contract. */
function endOnOwnTerms(deps: Deps, e: ExecutionRecord): void {
  if (!e.run) return finishExecution(deps, e, 'SUCCEEDED')
  // STATE-016, STATE-018, STATE-028: the Run's frozen contract decides how it ends.
  const produced = listOutputs(deps.db, e.id, -1, 1000).items.map((o) => ({
    key: o.key,
    error: (o.error as { code: string } | null) ?? null,
  }))
  const end = runEnd(e.run.outputs, e.run.allows_partial, produced)
  return end.status === 'FAILED'
    ? finishExecution(deps, e, 'FAILED', end.code, end.message)
    : finishExecution(deps, e, end.status)
}

const OUTPUT_HOOKS = { finish: finishExecution, publish: publishOutput, end: endOnOwnTerms }

/** Applies one script step to a live execution. */
function applyStep(deps: Deps, e: ExecutionRecord, step: ScenarioStep): void {
  const nowMs = deps.clock.nowMs()
  // STATE-009: a Run in CANCEL_REQUESTED does no more work; only the cancel confirmation (or its deadline) ends it.
  if (e.kind === 'RUN' && e.status === 'CANCEL_REQUESTED') return
  switch (step.step) {
    case 'running':
      if (e.status !== 'QUEUED') return
      e.started_at = nowMs
      setStatus(deps, e, 'RUNNING')
      deps.scheduler.schedule(
        'execution.time-limit',
        nowMs + e.execution_seconds * 1000,
        { id: e.id },
        { subject: e.id },
      )
      return
    case 'spend':
      e.spent_su = Math.round((e.spent_su + step.su) * 1e6) / 1e6
      if (e.spent_su > e.max_su) {
        e.spent_su = e.max_su
        return finishExecution(
          deps,
          e,
          'FAILED',
          'BUDGET_EXCEEDED',
          'The execution spent its max_su budget.',
        )
      }
      // RUN-007, RUN-008: a step's settled cost marks one unique step done (before the last one).
      if (e.run) {
        // Events feature: the count before, to tell listeners a step ended (run.step.completed).
        const stepsBefore = e.progress_completed ?? 0
        e.progress_completed = Math.min(
          progressAfterStep(e.progress_completed ?? 0, e.run.progress_total),
          Math.max(0, e.run.progress_total - 1),
        )
        if (e.progress_completed > stepsBefore)
          emit(deps, { type: 'step', execution: e, completed: e.progress_completed })
      }
      saveExecution(deps.db, e)
      return
    case 'output': {
      // Result rules (execution/outputs.ts): a Turn fails with the broken rule's code; a Run keeps the item
      // with its error for the end rules; a FILE still being prepared is held until the end.
      const built = produceOutput(deps, e, step.output)
      if ('fail' in built)
        return finishExecution(deps, e, 'FAILED', built.fail.code, built.fail.message)
      if ('item' in built) publishOutput(deps, e, built.item)
      return
    }
    case 'action_required':
      // Interactive actions (execution/actions.ts) when the Project has the facility: REQUIRES_ACTION.
      if (requireAction(deps, e, step, e.steps.indexOf(step))) return
      // The private beta does not provide the interactive facility.
      return finishExecution(
        deps,
        e,
        'FAILED',
        'ACTION_REQUIRED_UNSUPPORTED',
        'A human answer or approval was needed but is not supported.',
      )
    case 'succeed':
      // TIME-002: the end waits for result files still being prepared (execution/outputs.ts).
      if (startPreparation(deps, e, e.steps.indexOf(step), OUTPUT_HOOKS)) return
      return endOnOwnTerms(deps, e)
    case 'fail':
      return finishExecution(deps, e, 'FAILED', step.code, step.message)
  }
}

/** Registers the executor's timer kinds. */
export function registerExecutionTimers(kinds: TimerKinds): void {
  registerActionTimers(kinds)
  registerOutputTimers(kinds, OUTPUT_HOOKS)
  kinds.register<{ id: string; index: number }>('execution.step', ({ id, index }, { deps }) => {
    const e = getExecution(deps.db, id)
    const step = e?.steps[index]
    if (!e || e.terminal || !step) return
    applyStep(deps, e, step)
  })
  kinds.register<{ id: string }>('execution.queue-timeout', ({ id }, { deps }) => {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal && e.status === 'QUEUED')
      finishExecution(
        deps,
        e,
        'EXPIRED',
        'QUEUE_TIMEOUT',
        'The execution did not start within queue_seconds.',
      )
  })
  kinds.register<{ id: string }>('run.deadline', ({ id }, { deps }) => {
    // STATE-014: the whole-Run deadline (run_seconds) ends any non-terminal Run EXPIRED.
    const e = getExecution(deps.db, id)
    if (e && !e.terminal)
      finishExecution(
        deps,
        e,
        'EXPIRED',
        'RUN_DEADLINE_EXCEEDED',
        'The Run reached its overall deadline (run_seconds).',
      )
  })
  kinds.register<{ id: string }>('run.cancel-confirmed', ({ id }, { deps }) => {
    // STATE-009, STATE-012: every child execution is confirmed ended: CANCELED, or FAILED with
    // EXTERNAL_EFFECT_UNKNOWN when the control API said an external effect cannot be confirmed.
    const e = getExecution(deps.db, id)
    if (!e || e.terminal) return
    if (e.cancel_outcome === 'EXTERNAL_EFFECT_UNKNOWN')
      return finishExecution(
        deps,
        e,
        'FAILED',
        'EXTERNAL_EFFECT_UNKNOWN',
        'The outcome of a write to an external system could not be confirmed; it is not rerun.',
      )
    finishExecution(deps, e, 'CANCELED', 'CANCELED', 'Stopped by a cancel request.')
  })
  kinds.register<{ id: string; code: string }>('execution.cancel', ({ id, code }, { deps }) => {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal) finishExecution(deps, e, 'CANCELED', code, 'Stopped by a cancel request.')
  })
  kinds.register<{ key: string }>('access.key-expiry', ({ key }, { deps }) => {
    // Authentication 6: an expired key's running executions are canceled with AUTHORIZATION_REVOKED.
    for (const id of openExecutionsOfKey(deps.db, key)) {
      const e = getExecution(deps.db, id)
      if (e && !e.terminal)
        finishExecution(deps, e, 'CANCELED', 'AUTHORIZATION_REVOKED', 'The key expired.')
    }
  })
  kinds.register<{ id: string }>('execution.time-limit', ({ id }, { deps }) => {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal)
      finishExecution(
        deps,
        e,
        'FAILED',
        'EXECUTION_TIMEOUT',
        'The execution exceeded execution_seconds.',
      )
  })
}

/** Whether an execution has not ended (idempotency receipts are kept until it ends). */
export const isExecutionOpen = (deps: Deps, id: string): boolean => {
  const e = getExecution(deps.db, id)
  return e !== undefined && !e.terminal
}
