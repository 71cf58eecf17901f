/**
 * Forward-compatibility events (mock/domain/forward-compat.ts): while the instance's switch is on, an
 * execution that starts (RUNNING) also appends an event of an unknown type (turn.insight for a Session,
 * run.insight for a Run) whose content has an unknown kind (INSIGHT). It is a real event of the log: it has an
 * id and a sequence, resumes like any other, is a Session item, and goes to every webhook endpoint.
 */
import type { Deps } from '../deps.js'
import { FUTURE_CONTENT_KIND, FUTURE_EVENT_TYPES } from '../domain/forward-compat.js'
import type { ExecutionEvent } from '../execution/lifecycle.js'
import { getSession } from '../store/executions.js'
import { appendEvent, type EventRecord } from './log.js'

/** The execution listener (subscribed by mock/wiring.ts after the public mapping). */
export function appendFutureEvent(deps: Deps, ev: ExecutionEvent): void {
  if (!deps.forwardCompat.enabled || ev.type !== 'status') return
  const e = ev.execution
  if (e.status !== 'RUNNING' || ev.from === 'RUNNING') return
  // An unknown content kind: outside the 1.3.0 ItemContent union on purpose.
  const data = {
    kind: FUTURE_CONTENT_KIND,
    note: 'an event type and content kind unknown to 1.3.0 clients: ignore them',
  } as unknown as EventRecord['data']
  if (e.kind === 'TURN') {
    const session = e.session_id ? getSession(deps.db, e.session_id) : undefined
    // A workflow step's internal Turn is not a public Session record.
    if (!session || session.workflow_run_id !== null) return
    appendEvent(deps, {
      aggregate_kind: 'SESSION',
      aggregate_id: session.id,
      project_id: e.project_id,
      session_id: session.id,
      turn_id: e.id,
      status: e.status,
      type: FUTURE_EVENT_TYPES.SESSION,
      data,
    })
    return
  }
  appendEvent(deps, {
    aggregate_kind: 'RUN',
    aggregate_id: e.id,
    project_id: e.project_id,
    run_id: e.id,
    status: e.status,
    type: FUTURE_EVENT_TYPES.RUN,
    data,
  })
}
