/**
 * Session items (Item envelope and page): GET /v1/sessions/{session_id}/items answers an ItemPage of the
 * Session's public records, the same records as its events, in sequence order. Query limit (1-100, default
 * 50) and after (the previous next_cursor, an item id) are assumed; a cursor of another Session is 400
 * INVALID_CURSOR. Items older than 30 days are hidden; an expired Session is 410 SESSION_EXPIRED.
 */
import type { Hono } from 'hono'
import { visibleSession } from '../access/access.js'
import type { Env } from '../deps.js'
import { eventsVisibleSince } from '../domain/retention.js'
import { DEFAULT_LIST_ITEMS, fittingCount, pageOverheadBytes } from '../domain/list-limits.js'
import { ApiError } from '../errors.js'
import { itemEnvelope } from '../events/public.js'
import { route } from '../http/route.js'
import { getEvent, visibleEventsAfter } from '../store/events.js'

export function itemRoutes(app: Hono<Env>): void {
  route(app, 'listSessionItems', (c, req) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const { limit = DEFAULT_LIST_ITEMS, after } = req.query
    let afterSequence = 0
    if (after !== undefined) {
      const cursor = getEvent(deps.db, after)
      if (!cursor || cursor.aggregate_kind !== 'SESSION' || cursor.aggregate_id !== session.id)
        throw new ApiError('INVALID_CURSOR', {
          message: 'The cursor is not an item of this Session.',
          details: { parameter: 'after' },
        })
      afterSequence = cursor.sequence
    }
    const since = eventsVisibleSince(deps.clock.nowMs())
    const rows = visibleEventsAfter(deps.db, session.id, afterSequence, since, limit + 1)
    // SIZE-014: the page ends before the response passes 256 KiB.
    const candidates = rows.slice(0, limit).map(itemEnvelope)
    const items = candidates.slice(
      0,
      fittingCount(candidates, pageOverheadBytes({ items: [], next_cursor: null })),
    )
    const more = rows.length > items.length
    return {
      status: 200,
      body: { items, next_cursor: more ? items.at(-1)!.id : null },
    }
  })
}
