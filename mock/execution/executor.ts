/**
 * The executor: an admitted execution follows its scenario script on the virtual clock. Each script step is
 * a timer (`execution.step`); `execution.queue-timeout` expires one that has not started within queue_seconds
 * (QUEUE_TIMEOUT), `execution.time-limit` fails one running past execution_seconds (EXECUTION_TIMEOUT),
 * `run.deadline` expires a Run at run_seconds, and cancels and key expiry end executions. The life cycle the
 * steps drive lives in execution/lifecycle.ts.
 */
import type { ErrorCode } from '../../spec/index.js'
import type { TimerKinds } from '../clock/timer-kinds.js'
import type { Deps } from '../deps.js'
import { progressAfterStep, runQueueWindowS } from '../domain/run.js'
import { closeStep, NO_STEPS, openStep, queuedSoFarS, runOpenStep } from '../domain/run-steps.js'
import { openExecutionsOfKey } from '../store/access.js'
import { getExecution, saveExecution, type ExecutionRecord } from '../store/executions.js'
import { registerActionTimers, requireAction } from './actions.js'
import {
  endOnOwnTerms,
  finishExecution,
  OUTPUT_HOOKS,
  publishOutput,
  setStatus,
} from './lifecycle.js'
import { produceOutput, registerOutputTimers, startPreparation } from './outputs.js'
import {
  armNextQueueTimeout,
  QUEUE_TIMEOUT,
  queueProjectOf,
  type QueueTimeoutPayload,
} from './queue-timeouts.js'
import { marksRunSteps, type ScenarioStep } from './scenarios.js'
import { revokeExecutions } from './withdrawal.js'

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
      // A Run whose script marks steps gets execution_seconds per step (step_start), not as a whole.
      if (!(e.kind === 'RUN' && marksRunSteps(e.steps))) armTimeLimit(deps, e, nowMs)
      return
    case 'step_start':
      return startRunStep(deps, e, step)
    case 'step_end': {
      if (e.kind !== 'RUN' || !e.run_steps) return
      deps.scheduler.cancelSubject(e.id, 'execution.time-limit')
      return endRunStep(deps, e, step.status ?? 'SUCCEEDED')
    }
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
      // RUN-007, RUN-008: in a script without step marks, a step's settled cost marks one unique step done
      // (before the last one, which ends with the Run).
      if (e.run && !marksRunSteps(e.steps)) {
        const stepsBefore = e.progress_completed ?? 0
        e.progress_completed = Math.min(
          progressAfterStep(e.progress_completed ?? 0, e.run.progress_total),
          Math.max(0, e.run.progress_total - 1),
        )
        if (e.progress_completed > stepsBefore)
          deps.bus.execution.emit(deps, {
            type: 'step',
            execution: e,
            step_id: `step-${e.progress_completed}`,
            status: 'SUCCEEDED',
          })
      }
      saveExecution(deps.db, e)
      return
    case 'tool':
      // EVT-002: the public record of a tool call is its name and call id; arguments and result stay here.
      return deps.bus.execution.emit(deps, {
        type: 'tool',
        execution: e,
        tool_name: step.name,
        call_id: step.call_id ?? deps.ids.uuid(),
      })
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
      return finishExecution(deps, e, step.status ?? 'FAILED', step.code, step.message)
  }
}

/** Arms the execution time limit (EXECUTION_TIMEOUT) execution_seconds from now. */
function armTimeLimit(deps: Deps, e: ExecutionRecord, nowMs: number): void {
  deps.scheduler.schedule(
    'execution.time-limit',
    nowMs + e.execution_seconds * 1000,
    { id: e.id },
    { subject: e.id },
  )
}

/**
 * A Run step begins. RUN-030, TIME-001: with queued_s it first waits queued, at most its queue_seconds and
 * never past the whole-Run queue total of 3,600 s (else the Run ends EXPIRED with QUEUE_TIMEOUT); RUN-029:
 * once it runs, execution_seconds applies to this step alone.
 */
function startRunStep(
  deps: Deps,
  e: ExecutionRecord,
  step: Extract<ScenarioStep, { step: 'step_start' }>,
): void {
  if (e.kind !== 'RUN' || e.status !== 'RUNNING') return
  const nowMs = deps.clock.nowMs()
  const waitS = step.queued_s ?? 0
  const state = e.run_steps ?? NO_STEPS
  e.run_steps = openStep(state, step.id, nowMs, waitS > 0)
  saveExecution(deps.db, e)
  if (waitS <= 0) return armTimeLimit(deps, e, nowMs)
  const windowS = runQueueWindowS(
    e.queue_seconds,
    queuedSoFarS(state, e.created_at, e.started_at, nowMs),
  )
  if (waitS > windowS)
    deps.scheduler.schedule(
      'run.step-queue-timeout',
      nowMs + windowS * 1000,
      { id: e.id },
      { subject: e.id },
    )
  else
    deps.scheduler.schedule(
      'run.step-run',
      nowMs + waitS * 1000,
      { id: e.id, waited_ms: waitS * 1000 },
      { subject: e.id },
    )
}

/** The open Run step ends: its STEP_OUTCOME; progress counts unique steps that succeeded (RUN-007, RUN-008). */
function endRunStep(deps: Deps, e: ExecutionRecord, status: 'SUCCEEDED' | 'FAILED'): void {
  const closed = e.run_steps ? closeStep(e.run_steps, status) : undefined
  if (!closed) return
  e.run_steps = closed.state
  e.progress_completed = closed.state.done.length
  saveExecution(deps.db, e)
  deps.bus.execution.emit(deps, { type: 'step', execution: e, step_id: closed.stepId, status })
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
  kinds.register<{ id: string; waited_ms: number }>(
    'run.step-run',
    ({ id, waited_ms }, { deps }) => {
      // The open step waited its time in the queue: it runs now, under its own execution time limit.
      const e = getExecution(deps.db, id)
      if (!e || e.terminal || !e.run_steps?.open || e.status !== 'RUNNING') return
      const nowMs = deps.clock.nowMs()
      e.run_steps = runOpenStep(e.run_steps, nowMs, waited_ms)
      saveExecution(deps.db, e)
      armTimeLimit(deps, e, nowMs)
    },
  )
  kinds.register<{ id: string }>('run.step-queue-timeout', ({ id }, { deps }) => {
    // TIME-001, RUN-030: a step did not start within its queue_seconds or the rest of the whole-Run total.
    const e = getExecution(deps.db, id)
    if (e && !e.terminal)
      finishExecution(
        deps,
        e,
        'EXPIRED',
        'QUEUE_TIMEOUT',
        'A step of the Run did not start within queue_seconds or the whole-Run queue total of 3,600 seconds.',
      )
  })
  kinds.register<QueueTimeoutPayload>(
    QUEUE_TIMEOUT,
    (payload, { deps }) => {
      // The Project's queue timeout (execution/queue-timeouts.ts): its execution expires if it has not started,
      // and the Project's next one is armed.
      const e = getExecution(deps.db, payload.id)
      if (e && !e.terminal && e.status === 'QUEUED')
        finishExecution(
          deps,
          e,
          'EXPIRED',
          'QUEUE_TIMEOUT',
          'The execution did not start within queue_seconds.',
        )
      const projectId = queueProjectOf(payload, e)
      if (projectId !== undefined) armNextQueueTimeout(deps, projectId)
    },
    {
      // A firing that failed (a bug) leaves its execution waiting; the Project's later ones still expire on
      // time: the chain goes on from the next key after the failed timer's.
      afterFailure: (payload, { deps, timer }) => {
        const projectId = queueProjectOf(payload, getExecution(deps.db, payload.id))
        if (projectId !== undefined)
          armNextQueueTimeout(deps, projectId, { due_at: timer.due_at, seq: timer.seq })
      },
    },
  )
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
  kinds.register<{ id: string; code: ErrorCode }>('execution.cancel', ({ id, code }, { deps }) => {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal) finishExecution(deps, e, 'CANCELED', code, 'Stopped by a cancel request.')
  })
  kinds.register<{ key: string }>('access.key-expiry', ({ key }, { deps }) => {
    // Authentication 6: an expired key's running executions are canceled with AUTHORIZATION_REVOKED.
    revokeExecutions(deps, openExecutionsOfKey(deps.db, key), 'The key expired.')
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
