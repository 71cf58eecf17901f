/**
 * The public event log (Events): every public change of a Session or Run becomes an event with event_id,
 * type, aggregate_kind, aggregate_id, sequence (increasing within its aggregate only), created_at and data.
 * appendEvent() runs inside the caller's transaction; listeners (SSE fan-out, webhook delivery) are told.
 */
import type { Deps } from '../deps.js'

export type AggregateKind = 'SESSION' | 'RUN'

export type EventRecord = {
  event_id: string
  aggregate_kind: AggregateKind
  aggregate_id: string
  sequence: number
  type: string
  /** ms since the epoch (virtual clock). */
  created_at: number
  /** Public data only: content kind, sanitized text, tool names, status. Never tool arguments or reasoning. */
  data: Record<string, unknown> & { kind: string }
  project_id: string
  session_id: string | null
  turn_id: string | null
  run_id: string | null
  step_id: string | null
  action_id: string | null
  status: string | null
}

type EventRow = Omit<EventRecord, 'data'> & { data_json: string }
const toEvent = ({ data_json, ...r }: EventRow): EventRecord => ({
  ...r,
  data: JSON.parse(data_json) as EventRecord['data'],
})

type Listener = (deps: Deps, event: EventRecord) => void
const listeners: Listener[] = []

/** Subscribes to appended events (called inside the appending transaction: record work, defer I/O). */
export const onEventAppended = (listener: Listener): void => {
  listeners.push(listener)
}

/** Appends an event with the next sequence of its aggregate and tells the listeners. */
export function appendEvent(
  deps: Deps,
  e: Omit<
    EventRecord,
    | 'event_id'
    | 'sequence'
    | 'created_at'
    | 'session_id'
    | 'turn_id'
    | 'run_id'
    | 'step_id'
    | 'action_id'
    | 'status'
  > &
    Partial<
      Pick<EventRecord, 'session_id' | 'turn_id' | 'run_id' | 'step_id' | 'action_id' | 'status'>
    >,
): EventRecord {
  const { db, ids, clock } = deps
  const last = db
    .stmt('SELECT MAX(sequence) AS n FROM events WHERE aggregate_id = ?')
    .get(e.aggregate_id) as { n: number | null }
  const event: EventRecord = {
    session_id: null,
    turn_id: null,
    run_id: null,
    step_id: null,
    action_id: null,
    status: null,
    ...e,
    event_id: ids.uuid(),
    sequence: (last.n ?? 0) + 1,
    created_at: clock.nowMs(),
  }
  db.stmt(
    `INSERT INTO events (event_id, aggregate_kind, aggregate_id, sequence, type, created_at, data_json, project_id, session_id, turn_id, run_id, step_id, action_id, status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    event.event_id,
    event.aggregate_kind,
    event.aggregate_id,
    event.sequence,
    event.type,
    event.created_at,
    JSON.stringify(event.data),
    event.project_id,
    event.session_id,
    event.turn_id,
    event.run_id,
    event.step_id,
    event.action_id,
    event.status,
  )
  for (const l of listeners) l(deps, event)
  return event
}

export function getEvent(deps: Deps, eventId: string): EventRecord | undefined {
  const row = deps.db.stmt('SELECT * FROM events WHERE event_id = ?').get(eventId) as
    EventRow | undefined
  return row && toEvent(row)
}

/** Events of an aggregate after a sequence number, in order. */
export function eventsAfter(
  deps: Deps,
  aggregateId: string,
  afterSequence: number,
  limit = 100,
): EventRecord[] {
  return (
    deps.db
      .stmt(
        'SELECT * FROM events WHERE aggregate_id = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      )
      .all(aggregateId, afterSequence, limit) as EventRow[]
  ).map(toEvent)
}

/**
 * Events of an aggregate after a sequence number that are still within retention (created after sinceMs),
 * in sequence order: what SSE replays and what Session items list. Older events are hidden at read time.
 */
export function visibleEventsAfter(
  deps: Deps,
  aggregateId: string,
  afterSequence: number,
  sinceMs: number,
  limit: number,
): EventRecord[] {
  return (
    deps.db
      .stmt(
        'SELECT * FROM events WHERE aggregate_id = ? AND sequence > ? AND created_at > ? ORDER BY sequence LIMIT ?',
      )
      .all(aggregateId, afterSequence, sinceMs, limit) as EventRow[]
  ).map(toEvent)
}

/** Event ids of a Turn's result items (MESSAGE and ARTIFACT content) in order, at most `limit`. */
export function resultItemIdsOfTurn(
  deps: Deps,
  sessionId: string,
  turnId: string,
  limit = 100,
): string[] {
  return (
    deps.db
      .stmt(
        `SELECT event_id FROM events WHERE aggregate_id = ? AND turn_id = ?
           AND json_extract(data_json, '$.kind') IN ('MESSAGE', 'ARTIFACT') ORDER BY sequence LIMIT ?`,
      )
      .all(sessionId, turnId, limit) as { event_id: string }[]
  ).map((r) => r.event_id)
}

/** How many events of one type an aggregate has (run.step.completed so far). */
export function countEventsOfType(deps: Deps, aggregateId: string, type: string): number {
  return (
    deps.db
      .stmt('SELECT COUNT(*) AS n FROM events WHERE aggregate_id = ? AND type = ?')
      .get(aggregateId, type) as { n: number }
  ).n
}
