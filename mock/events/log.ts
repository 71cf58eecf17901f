/**
 * The public event log (Events): every public change of a Session or Run becomes an event with event_id,
 * type, aggregate_kind, aggregate_id, sequence (increasing within its aggregate only), created_at and data.
 * appendEvent() runs inside the caller's transaction; the listeners the composition root subscribed on the
 * instance's bus (SSE fan-out, webhook delivery) are told.
 */
import type { Deps } from '../deps.js'
import { insertEvent, lastSequence, type EventRecord } from '../store/events.js'

export type { AggregateKind, EventRecord } from '../store/events.js'

/** Appends an event with the next sequence of its aggregate and tells the instance's listeners (deps.bus). */
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
      Pick<
        EventRecord,
        'event_id' | 'session_id' | 'turn_id' | 'run_id' | 'step_id' | 'action_id' | 'status'
      >
    >,
): EventRecord {
  const { db, ids, clock } = deps
  const last = lastSequence(db, e.aggregate_id)
  const event: EventRecord = {
    session_id: null,
    turn_id: null,
    run_id: null,
    step_id: null,
    action_id: null,
    status: null,
    ...e,
    // A given id: the record already has one (a TEXT output's item_id names its Session item, OUT-005).
    event_id: e.event_id ?? ids.uuid(),
    sequence: (last ?? 0) + 1,
    created_at: clock.nowMs(),
  }
  insertEvent(db, event)
  deps.bus.eventAppended.emit(deps, event)
  return event
}
