/**
 * Executor -> public events (Events): status changes and output items of Turns and Runs become event records,
 * inside the transaction that makes the change. Only public content leaves: progress phases, masked final
 * messages, output references and outcomes; never tool arguments, raw tool results or reasoning (EVT-002).
 */
import type { Deps } from '../deps.js'
import { maskPublicText } from '../domain/result-rules.js'
import { isOutcomeStatus, TERMINAL_STATUSES, type ExecutionEvent } from '../execution/lifecycle.js'
import { pendingActionOf, requiredActionView } from '../execution/actions.js'
import { resultItemIdsOfTurn } from '../store/events.js'
import {
  getExecution,
  getSession,
  listOutputs,
  type ExecutionRecord,
  type OutputItem,
} from '../store/executions.js'
import { appendEvent, type EventRecord } from './log.js'

/** OUTCOME item_ids hold at most 100 ids (Item envelope and page). */
const MAX_ITEM_IDS = 100
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Event type of a Turn's terminal status (turn.canceled and turn.expired are additive names). */
const TURN_OUTCOME_TYPE: Record<string, string> = {
  SUCCEEDED: 'turn.completed',
  FAILED: 'turn.failed',
  CANCELED: 'turn.canceled',
  EXPIRED: 'turn.expired',
}
/** Event type of a Run's terminal status: PARTIALLY_SUCCEEDED is a completion too. */
const RUN_OUTCOME_TYPE: Record<string, string> = {
  SUCCEEDED: 'run.completed',
  PARTIALLY_SUCCEEDED: 'run.completed',
  FAILED: 'run.failed',
  CANCELED: 'run.canceled',
  EXPIRED: 'run.expired',
}
/** Progress phase of a non-terminal status (the document names only EXECUTING; the rest are assumed). */
const PHASE: Record<string, string> = {
  RUNNING: 'EXECUTING',
  CANCEL_REQUESTED: 'CANCEL_REQUESTED',
  REQUIRES_ACTION: 'REQUIRES_ACTION',
}

/** The public error object of an outcome: code, message, retryable (false) and details when present. */
function publicError(e: ExecutionRecord) {
  if (!e.error) return null
  const { code, message, retryable, details } = e.error
  return details === undefined
    ? { code, message, retryable }
    : { code, message, retryable, details }
}

const usageOf = (e: ExecutionRecord) => ({
  status: e.usage_status,
  total_su: e.usage_status === 'FINAL' ? e.spent_su : null,
})

/** The execution listener that appends the public event(s) of one executor event. */
export function mapExecutionEvent(deps: Deps, ev: ExecutionEvent): void {
  if (ev.execution.kind === 'TURN') mapTurn(deps, ev)
  else mapRun(deps, ev)
}

function mapTurn(deps: Deps, ev: ExecutionEvent): void {
  const e = ev.execution
  const session = e.session_id ? getSession(deps.db, e.session_id) : undefined
  if (!session) return
  if (session.workflow_run_id !== null) {
    // A workflow step's internal Turn is not a public Session record; its end is a step of the Run.
    if (ev.type === 'status' && TERMINAL_STATUSES.has(e.status))
      appendRunStepCompleted(deps, session.workflow_run_id, e.id, e.status)
    return
  }
  const base = {
    aggregate_kind: 'SESSION' as const,
    aggregate_id: session.id,
    project_id: e.project_id,
    session_id: session.id,
    turn_id: e.id,
    status: e.status,
  }
  if (ev.type === 'output') {
    appendEvent(deps, Object.assign({}, base, outputEvent(ev.item)))
    return
  }
  if (ev.type === 'tool') {
    appendEvent(deps, Object.assign({}, base, toolEvent(ev)))
    return
  }
  if (ev.type !== 'status' || e.status === ev.from) return
  const outcomeType = TURN_OUTCOME_TYPE[e.status]
  if (outcomeType && isOutcomeStatus(e.status)) {
    appendEvent(deps, Object.assign({}, base, usageEvent(e)))
    appendEvent(deps, {
      type: outcomeType,
      data: {
        kind: 'OUTCOME',
        status: e.status,
        error: publicError(e),
        item_ids: resultItemIdsOfTurn(deps.db, session.id, e.id, MAX_ITEM_IDS),
        usage: usageOf(e),
      },
      ...base,
    })
    return
  }
  const action = e.status === 'REQUIRES_ACTION' ? pendingActionOf(deps, e.id) : undefined
  if (action) {
    // Assumed type (the document names only run.action_required): a Turn's question action.
    appendEvent(deps, {
      type: 'turn.action_required',
      action_id: action.id,
      data: { kind: 'REQUIRED_ACTION', action: requiredActionView(e, action) },
      ...base,
    })
    return
  }
  const phase = PHASE[e.status]
  if (phase)
    appendEvent(deps, { type: 'turn.progress', data: { kind: 'PROGRESS', phase }, ...base })
}

/**
 * tool.started (TOOL_CALL): a tool call began. Events, first paragraph: public events carry only tool names and
 * call ids, never tool arguments or raw results (EVT-002); the field names are assumed (content not shown).
 */
function toolEvent(
  ev: Extract<ExecutionEvent, { type: 'tool' }>,
): Pick<EventRecord, 'type' | 'data'> {
  return {
    type: 'tool.started',
    data: { kind: 'TOOL_CALL', tool_name: ev.tool_name, call_id: ev.call_id },
  }
}

/**
 * usage.settled (USAGE; the event type is assumed): the execution's usage once settled at its end, just before
 * its outcome: status FINAL and total_su, the same values as the outcome's and the detail's usage.
 */
function usageEvent(e: ExecutionRecord): Pick<EventRecord, 'type' | 'data'> {
  return { type: 'usage.settled', data: { kind: 'USAGE', ...usageOf(e) } }
}

/** TEXT -> message.created (MESSAGE, masked text); JSON, FILE, URL -> artifact.created (an OutputReference). */
function outputEvent(item: OutputItem): Pick<EventRecord, 'type' | 'data'> & { event_id?: string } {
  // OUT-005: a TEXT output's item_id is the id of its Session item (the event).
  const event_id =
    item.type === 'TEXT' && typeof item.item_id === 'string' ? item.item_id : undefined
  // A TEXT over 64 KiB is delivered as a file (no inline text): announced as an artifact like the others.
  if (item.type === 'TEXT' && typeof item.text === 'string') {
    return {
      event_id,
      type: 'message.created',
      data: {
        kind: 'MESSAGE',
        text: maskPublicText(item.text),
        // MessageContent has no REVIEW visibility (the scripts never produce a REVIEW output item).
        visibility: item.visibility === 'REVIEW' ? 'FINAL' : item.visibility,
      },
    }
  }
  // OutputReference (fields not shown): which output, never its value or a download address.
  return {
    ...(event_id ? { event_id } : {}),
    type: 'artifact.created',
    data: { kind: 'ARTIFACT', output: { id: item.id, key: item.key, type: item.type } },
  }
}

function mapRun(deps: Deps, ev: ExecutionEvent): void {
  if (ev.type === 'step') {
    appendRunStepCompleted(deps, ev.execution.id, ev.step_id, ev.status)
    return
  }
  const e = ev.execution
  const base = {
    aggregate_kind: 'RUN' as const,
    aggregate_id: e.id,
    project_id: e.project_id,
    run_id: e.id,
    status: e.status,
  }
  if (ev.type === 'tool') {
    appendEvent(deps, Object.assign({}, base, toolEvent(ev)))
    return
  }
  // Run results are published with the terminal status (Run): outputs are not events of their own.
  if (ev.type !== 'status') return
  if (e.status === ev.from) return
  const outcomeType = RUN_OUTCOME_TYPE[e.status]
  if (outcomeType && isOutcomeStatus(e.status)) {
    const outputs = listOutputs(deps.db, e.id, -1, MAX_ITEM_IDS).items
    appendEvent(deps, Object.assign({}, base, usageEvent(e)))
    appendEvent(deps, {
      type: outcomeType,
      data: {
        kind: 'OUTCOME',
        status: e.status,
        error: publicError(e),
        item_ids: outputs.map((o) => o.id).filter((id) => UUID.test(id)),
        usage: usageOf(e),
      },
      ...base,
    })
    return
  }
  if (e.status === 'REQUIRES_ACTION') {
    // STATE-023: run.action_required carries the action id (and the required_actions element as content).
    const action = pendingActionOf(deps, e.id)
    appendEvent(deps, {
      type: 'run.action_required',
      action_id: action?.id ?? null,
      data: action
        ? { kind: 'REQUIRED_ACTION', action: requiredActionView(e, action) }
        : { kind: 'REQUIRED_ACTION' },
      ...base,
    })
    return
  }
  const phase = PHASE[e.status]
  if (phase) appendEvent(deps, { type: 'run.progress', data: { kind: 'PROGRESS', phase }, ...base })
}

/**
 * run.step.completed (STEP_OUTCOME): the end of one step of a Run, never the end of the Run (state rule 4):
 * a step a script ends (or the Run's end ends), and a workflow step's internal Turn.
 */
export function appendRunStepCompleted(
  deps: Deps,
  runId: string,
  stepId: string,
  status: string,
): EventRecord | undefined {
  const run = getExecution(deps.db, runId)
  if (!run || run.kind !== 'RUN') return undefined
  return appendEvent(deps, {
    aggregate_kind: 'RUN',
    aggregate_id: runId,
    project_id: run.project_id,
    run_id: runId,
    step_id: stepId,
    status: run.status,
    type: 'run.step.completed',
    data: { kind: 'STEP_OUTCOME', status, step_id: stepId },
  })
}
