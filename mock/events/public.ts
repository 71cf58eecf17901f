/**
 * The public shapes of an event record (Events; Item envelope and page): the SSE data line (schema Event) and
 * the Session item (schema ItemEnvelope). Both carry the same content; internal columns never leave the mock.
 */
import type { components } from '../../spec/index.js'
import type { ErrorEnvelope } from '../errors.js'
import type { EventRecord } from './log.js'
import { iso } from '../util/iso.js'

/** The Event schema: the data line of an SSE frame and nothing else. */
export function publicEvent(e: EventRecord) {
  return {
    event_id: e.event_id,
    aggregate_kind: e.aggregate_kind,
    aggregate_id: e.aggregate_id,
    sequence: e.sequence,
    type: e.type,
    created_at: iso(e.created_at),
    data: e.data,
  }
}

/** The ItemEnvelope of a Session event: the item id is the event id, the content is the event's data. */
export function itemEnvelope(e: EventRecord): components['schemas']['ItemEnvelope'] {
  return {
    id: e.event_id,
    session_id: e.aggregate_id,
    turn_id: e.turn_id,
    sequence: e.sequence,
    created_at: iso(e.created_at),
    content: e.data,
  }
}

/** One standard SSE frame: id, event, one line of JSON data, blank line (SSE-005). */
export function eventFrame(e: EventRecord): string {
  // JSON.stringify escapes line breaks inside strings, so the data is always one line.
  return `id: ${e.event_id}\nevent: ${e.type}\ndata: ${JSON.stringify(publicEvent(e))}\n\n`
}

/** The error frame after the stream started (SSE-020): event error, no id, data the error envelope. */
export function errorFrame(envelope: ErrorEnvelope): string {
  return `event: error\ndata: ${JSON.stringify(envelope)}\n\n`
}

/** The keep-alive comment (SSE-009). */
export const KEEP_ALIVE_FRAME = ': keep-alive\n\n'

/** The reconnection-delay hint a stream starts with (a frame with no event: clients only note the delay). */
export const retryFrame = (ms: number): string => `retry: ${ms}\n\n`
