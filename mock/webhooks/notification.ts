/**
 * What a notification says (Webhook notifications; Webhook endpoint (management)): the event types an endpoint
 * may subscribe to, the default set, and the body built from a public event: ids, type, sequence, time, status
 * and relative read paths only, never input, results, files or download addresses (WHN-002, WHN-003, WHN-004).
 */
import type { EventRecord } from '../events/log.js'

/** WHM-004: without event_types, an endpoint gets the end and action_required events of Turns and Runs. */
export const DEFAULT_EVENT_TYPES: readonly string[] = [
  'turn.completed',
  'turn.failed',
  'turn.canceled',
  'turn.expired',
  'turn.action_required',
  'run.completed',
  'run.failed',
  'run.canceled',
  'run.expired',
  'run.action_required',
]

/**
 * The types an endpoint may name: the default set, run.step.completed (end of one step only, WHM-005) and the
 * progress types the document names for SSE, tool.started among them (and the mock's artifact.created,
 * run.progress, usage.settled). Other names are refused at registration (a typo would otherwise silently
 * receive nothing).
 */
export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = [
  ...DEFAULT_EVENT_TYPES,
  'run.step.completed',
  'message.created',
  'tool.started',
  'turn.progress',
  'artifact.created',
  'run.progress',
  'usage.settled',
]

/** Rule 1: a notification body is at most 4 KiB. */
export const MAX_BODY_BYTES = 4096

/** The event types an endpoint receives (its own list, or the default set). */
export const subscribedTypes = (eventTypes: readonly string[] | null): readonly string[] =>
  eventTypes ?? DEFAULT_EVENT_TYPES

/** Status implied by an end event's type when the event itself carries none. */
const STATUS_BY_SUFFIX: Record<string, string> = {
  completed: 'SUCCEEDED',
  failed: 'FAILED',
  canceled: 'CANCELED',
  expired: 'EXPIRED',
  action_required: 'REQUIRES_ACTION',
}

/** The status at the time of the event (rule: do not overwrite stored state with it). */
function statusOf(event: EventRecord): string {
  if (event.status) return event.status
  const inner = 'status' in event.data ? event.data.status : undefined
  if (typeof inner === 'string') return inner
  if (event.type === 'run.step.completed') return 'RUNNING'
  const suffix = event.type.slice(event.type.indexOf('.') + 1)
  return STATUS_BY_SUFFIX[suffix] ?? 'RUNNING'
}

export type Notification = {
  event_id: string
  type: string
  aggregate_kind: string
  sequence: number
  occurred_at: string
  session_id?: string
  turn_id?: string
  run_id?: string
  step_id?: string
  action_id?: string
  status_url?: string
  outputs_url?: string
  status: string
}

/** The notification of an event; fields in a fixed order so the bytes are the same every time. */
export function buildNotification(event: EventRecord): Notification {
  const n: Notification = {
    event_id: event.event_id,
    type: event.type,
    aggregate_kind: event.aggregate_kind,
    sequence: event.sequence,
    occurred_at: new Date(event.created_at).toISOString(),
    status: '',
  }
  if (event.aggregate_kind === 'RUN') {
    const runId = event.run_id ?? event.aggregate_id
    n.run_id = runId
    if (event.step_id) n.step_id = event.step_id
    if (event.action_id) n.action_id = event.action_id
    n.status_url = `/v1/runs/${runId}`
    n.outputs_url = `/v1/runs/${runId}/outputs`
  } else {
    const sessionId = event.session_id ?? event.aggregate_id
    n.session_id = sessionId
    if (event.turn_id) n.turn_id = event.turn_id
    if (event.step_id) n.step_id = event.step_id
    if (event.action_id) n.action_id = event.action_id
    if (event.turn_id) {
      n.status_url = `/v1/sessions/${sessionId}/turns/${event.turn_id}`
      n.outputs_url = `/v1/sessions/${sessionId}/turns/${event.turn_id}/outputs`
    }
  }
  // status last, as in the document's field table.
  const { status: _placeholder, ...rest } = n
  return Object.assign({}, rest, { status: statusOf(event) })
}

/** The body bytes of a notification (JSON, UTF-8). */
export const notificationBody = (event: EventRecord): string =>
  JSON.stringify(buildNotification(event))
