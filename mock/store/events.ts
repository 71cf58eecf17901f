/**
 * The public event log's table (mock/store/schema/130-events.sql): prepared statements and row <-> record
 * mapping. Sequences, listeners and retention live in mock/events/log.ts; every lookup is by primary key or
 * the (aggregate_id, sequence) index.
 */
import type { components } from '../../spec/index.js'
import type { Db } from './db.js'

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
  data: components['schemas']['ItemContent']
  project_id: string
  session_id: string | null
  turn_id: string | null
  run_id: string | null
  step_id: string | null
  action_id: string | null
  status: string | null
}

/** An events row as stored (data unparsed). */
export type EventRow = Omit<EventRecord, 'data'> & { data_json: string }
const toEvent = ({ data_json, ...r }: EventRow): EventRecord => ({
  ...r,
  data: JSON.parse(data_json) as EventRecord['data'],
})

/** The highest sequence of an aggregate's events, null when it has none. */
export function lastSequence(db: Db, aggregateId: string): number | null {
  return (
    db.stmt('SELECT MAX(sequence) AS n FROM events WHERE aggregate_id = ?').get(aggregateId) as {
      n: number | null
    }
  ).n
}

export function insertEvent(db: Db, event: EventRecord): void {
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
}

export function getEvent(db: Db, eventId: string): EventRecord | undefined {
  const row = db.stmt('SELECT * FROM events WHERE event_id = ?').get(eventId) as
    EventRow | undefined
  return row && toEvent(row)
}

/** Events of an aggregate after a sequence number, in order. */
export function eventsAfter(
  db: Db,
  aggregateId: string,
  afterSequence: number,
  limit = 100,
): EventRecord[] {
  return (
    db
      .stmt(
        'SELECT * FROM events WHERE aggregate_id = ? AND sequence > ? ORDER BY sequence LIMIT CAST(? AS INTEGER)',
      )
      .all(aggregateId, afterSequence, limit) as EventRow[]
  ).map(toEvent)
}

/**
 * Events of an aggregate after a sequence number that are still within retention (created after sinceMs),
 * in sequence order: what SSE replays and what Session items list. Older events are hidden at read time.
 */
export function visibleEventsAfter(
  db: Db,
  aggregateId: string,
  afterSequence: number,
  sinceMs: number,
  limit: number,
): EventRecord[] {
  return (
    db
      .stmt(
        'SELECT * FROM events WHERE aggregate_id = ? AND sequence > ? AND created_at > ? ORDER BY sequence LIMIT CAST(? AS INTEGER)',
      )
      .all(aggregateId, afterSequence, sinceMs, limit) as EventRow[]
  ).map(toEvent)
}

/** Event ids of a Turn's result items (MESSAGE and ARTIFACT content) in order, at most `limit`. */
export function resultItemIdsOfTurn(
  db: Db,
  sessionId: string,
  turnId: string,
  limit = 100,
): string[] {
  return (
    db
      .stmt(
        `SELECT event_id FROM events WHERE aggregate_id = ? AND turn_id = ?
           AND json_extract(data_json, '$.kind') IN ('MESSAGE', 'ARTIFACT') ORDER BY sequence LIMIT CAST(? AS INTEGER)`,
      )
      .all(sessionId, turnId, limit) as { event_id: string }[]
  ).map((r) => r.event_id)
}
