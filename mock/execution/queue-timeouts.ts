/**
 * Queue timeouts (TIME-001, STATE rules: QUEUED to EXPIRED with QUEUE_TIMEOUT): an execution that has not
 * started within its queue window (queue_seconds; a Run's also within the whole-Run queue total) expires.
 *
 * One pending timer per Project instead of one per execution: each execution keeps its deadline
 * (queue_due_at) and the timer seq it took at acceptance (queue_timer_seq), which together are the key its
 * own timer would have had. The Project's timer (subject queue:<project>) holds the key of its earliest
 * not-started execution, or an earlier one; when it fires it expires its execution if that one still has not
 * started, and arms the key of the next not-started execution. A busy Project's acceptances, whose deadlines
 * come after the armed one, write no timer. Timers fire in the order a timer per execution fired in, since each
 * fires under the key that execution's own timer had.
 */
import type { Deps } from '../deps.js'
import { runQueueWindowS } from '../domain/run.js'
import { firstQueuedOf, type ExecutionRecord } from '../store/executions.js'
import { firstTimerOf } from '../store/timers.js'

export const QUEUE_TIMEOUT = 'execution.queue-timeout'

/** What a queue-timeout timer carries: its execution, and its Project (to arm the next one). */
export type QueueTimeoutPayload = { id: string; project_id?: string }

/**
 * The Project a queue-timeout timer arms the next one of: its payload's, else (a timer of a store older than
 * schema 280, which carries its execution only) its execution's.
 */
export function queueProjectOf(
  p: QueueTimeoutPayload,
  e: Pick<ExecutionRecord, 'project_id'> | undefined,
): string | undefined {
  return p.project_id ?? e?.project_id
}

/** The subject of a Project's queue-timeout timer. */
export const queueSubject = (projectId: string): string => `queue:${projectId}`

/** TIME-001: when an execution expires if it has not started (its created_at plus its queue window). */
export function queueDueAt(
  e: Pick<ExecutionRecord, 'kind' | 'queue_seconds' | 'created_at'>,
): number {
  // A Run's wait is also bounded by the whole-Run queue total (its one queued step starts at 0).
  const queueS = e.kind === 'RUN' ? runQueueWindowS(e.queue_seconds, 0) : e.queue_seconds
  return e.created_at + queueS * 1000
}

/**
 * At acceptance (the execution stored with its queue_due_at and queue_timer_seq): arms its queue timeout
 * unless the Project's armed one comes first, which it does whenever an earlier accepted execution with the
 * same window waits.
 */
export function armQueueTimeout(
  deps: Deps,
  e: Pick<ExecutionRecord, 'id' | 'project_id' | 'queue_due_at' | 'queue_timer_seq'>,
): void {
  const due = e.queue_due_at!
  const seq = e.queue_timer_seq!
  const armed = firstTimerOf(deps.db, queueSubject(e.project_id))
  if (armed && (armed.due_at < due || (armed.due_at === due && armed.seq < seq))) return
  arm(deps, e.project_id, e.id, due, seq)
}

/**
 * After a queue timeout fired: arms the Project's next one, the earliest of its executions that have not
 * started (none: nothing is armed until the next acceptance); with `after`, the earliest whose key comes after
 * that one (after a firing that failed: its own execution is left out).
 */
export function armNextQueueTimeout(
  deps: Deps,
  projectId: string,
  after?: { due_at: number; seq: number },
): void {
  const next = firstQueuedOf(deps.db, projectId, after)
  if (next) arm(deps, projectId, next.id, next.queue_due_at, next.queue_timer_seq)
}

function arm(deps: Deps, projectId: string, id: string, due: number, seq: number): void {
  const payload: QueueTimeoutPayload = { id, project_id: projectId }
  deps.scheduler.scheduleReserved(QUEUE_TIMEOUT, due, seq, payload, {
    subject: queueSubject(projectId),
  })
}
