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
import { containsCredential, urlResultProblem } from '../domain/result-rules.js'
import { chargeProject } from '../store/projects.js'
import {
  countAdmitted,
  getExecution,
  insertExecution,
  insertOutput,
  saveExecution,
  waitingExecutions,
  type ExecutionRecord,
  type OutputItem,
} from '../store/executions.js'
import type { OutputSpec, ScenarioStep } from './scenarios.js'

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
export function acceptExecution(deps: Deps, e: Omit<ExecutionRecord, 'seq'>): ExecutionRecord {
  const { db, clock, scheduler } = deps
  const record = insertExecution(db, e)
  if (countAdmitted(db, record.project_id) < PROJECT_CONCURRENCY) admit(deps, record, clock.nowMs())
  scheduler.schedule(
    'execution.queue-timeout',
    record.created_at + record.queue_seconds * 1000,
    { id: record.id },
    { subject: record.id },
  )
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
  e.error = code ? { code, message: message ?? code, retryable: false } : null
  e.usage_status = 'FINAL'
  saveExecution(db, e)
  chargeProject(db, e.project_id, e.spent_su)
  scheduler.cancelSubject(e.id)
  emit(deps, { type: 'status', execution: e, from })
  admitWaiting(deps, e.project_id, nowMs)
}

/** Admits waiting executions of a Project while slots are free, oldest first. */
function admitWaiting(deps: Deps, projectId: string, nowMs: number): void {
  const free = PROJECT_CONCURRENCY - countAdmitted(deps.db, projectId)
  if (free <= 0) return
  for (const next of waitingExecutions(deps.db, projectId, free)) admit(deps, next, nowMs)
}

function setStatus(deps: Deps, e: ExecutionRecord, status: string): void {
  const from = e.status
  e.status = status
  saveExecution(deps.db, e)
  emit(deps, { type: 'status', execution: e, from })
}

/** The output item of a step, or the result-rule code it breaks. */
function buildOutput(deps: Deps, spec: OutputSpec): { item: OutputItem } | { code: string } {
  const base = {
    id: deps.ids.uuid(),
    key: spec.key ?? 'result',
    type: spec.type,
    visibility: spec.visibility ?? 'FINAL',
    availability: 'READY',
    error: spec.error_code
      ? { code: spec.error_code, message: spec.error_code, retryable: false }
      : null,
  }
  switch (spec.type) {
    case 'TEXT':
      if (containsCredential(spec.text)) return { code: 'OUTPUT_CONTAINS_CREDENTIALS' }
      return { item: { ...base, item_id: base.id, text: spec.text } }
    case 'JSON': {
      if (containsCredential(spec.data)) return { code: 'OUTPUT_CONTAINS_CREDENTIALS' }
      const size = Buffer.byteLength(JSON.stringify(spec.data))
      return {
        item: {
          ...base,
          data: spec.data,
          schema_ref: spec.schema_ref ?? 'mock:result',
          mime_type: 'application/json',
          size_bytes: size,
          artifact_id: null,
        },
      }
    }
    case 'URL': {
      if (containsCredential(spec.url)) return { code: 'OUTPUT_CONTAINS_CREDENTIALS' }
      const problem = urlResultProblem(spec.url)
      if (problem) return { code: problem }
      return { item: { ...base, url: spec.url, access: spec.access ?? 'PUBLIC' } }
    }
    case 'FILE':
      return { code: 'ARTIFACT_PREPARATION_FAILED' }
  }
}

/** Applies one script step to a live execution. */
function applyStep(deps: Deps, e: ExecutionRecord, step: ScenarioStep): void {
  const nowMs = deps.clock.nowMs()
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
      saveExecution(deps.db, e)
      return
    case 'output': {
      const built = buildOutput(deps, step.output)
      if ('code' in built) return finishExecution(deps, e, 'FAILED', built.code)
      insertOutput(deps.db, e.id, built.item)
      emit(deps, { type: 'output', execution: e, item: built.item })
      return
    }
    case 'action_required':
      // The private beta does not provide the interactive facility.
      return finishExecution(
        deps,
        e,
        'FAILED',
        'ACTION_REQUIRED_UNSUPPORTED',
        'A human answer or approval was needed but is not supported.',
      )
    case 'succeed':
      return finishExecution(deps, e, 'SUCCEEDED')
    case 'fail':
      return finishExecution(deps, e, 'FAILED', step.code, step.message)
  }
}

/** Registers the executor's timer kinds. */
export function registerExecutionTimers(kinds: TimerKinds): void {
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
  kinds.register<{ id: string; code: string }>('execution.cancel', ({ id, code }, { deps }) => {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal) finishExecution(deps, e, 'CANCELED', code, 'Stopped by a cancel request.')
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
