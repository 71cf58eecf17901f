/**
 * SSE streams (Events > SSE streams): GET /v1/sessions/{session_id}/events (events:read) and
 * GET /v1/runs/{run_id}/events (events:read and runs:read). Resume with Last-Event-ID or query after (both:
 * equal, else 400 INVALID_CURSOR); an event of another Session or Run is 404; a cursor past retention is
 * 410 EVENT_CURSOR_EXPIRED with the recovery addresses. The stream itself lives in mock/events/sse.ts.
 */
import type { Context, Hono } from 'hono'
import type { Deps, Env } from '../deps.js'
import { eventExpired } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { accessProblem, type Aggregate } from '../access/access.js'
import { openStream, SSE_HEADERS, type OpenStreamOptions } from '../events/sse.js'
import type { StreamAction } from '../faults/rules.js'
import { route } from '../http/route.js'
import type { TypedRequest } from '../http/typed.js'
import { getEvent } from '../store/events.js'
import { latestTurnOfSession } from '../store/executions.js'

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** Where the resume cursor came from: the header, or the query parameter (named in details.parameter). */
type Cursor = { id: string; parameter: 'Last-Event-ID' | 'after' }

/** The resume cursor of the request: Last-Event-ID or after; both must be equal (SSE-014). */
function requestCursor(
  c: Context<Env>,
  req: TypedRequest<'streamSessionEvents' | 'streamRunEvents'>,
): Cursor | undefined {
  const header = c.req.header('Last-Event-ID')?.trim() || undefined
  // The query value is already checked against its uuid format (400 INVALID_CURSOR otherwise).
  const query = req.query.after
  if (header !== undefined && query !== undefined && header !== query)
    throw new ApiError('INVALID_CURSOR', {
      message: 'Last-Event-ID and after were both sent and differ.',
      details: { parameter: 'Last-Event-ID' },
    })
  if (header !== undefined && !UUID.test(header))
    throw new ApiError('INVALID_CURSOR', {
      message: 'Last-Event-ID is not an event id.',
      details: { parameter: 'Last-Event-ID' },
    })
  if (header !== undefined) return { id: header, parameter: 'Last-Event-ID' }
  return query === undefined ? undefined : { id: query, parameter: 'after' }
}

type Recovery = { state_url: string; items_url: string }

/** The sequence the stream resumes after, or the error the cursor earns. */
function resumeAfter(
  deps: Deps,
  apiKey: string,
  cursor: Cursor,
  aggregate: Aggregate,
  recovery: () => Recovery,
  contentExpired: boolean,
): number {
  const event = getEvent(deps.db, cursor.id)
  // SVC-002: an event of a Session or Run the key cannot see is answered exactly like an unknown id.
  const visible =
    event !== undefined &&
    accessProblem(deps, apiKey, { kind: event.aggregate_kind, id: event.aggregate_id })?.code !==
      'NOT_FOUND'
  if (!event || !visible)
    throw new ApiError('INVALID_CURSOR', {
      message: 'The cursor is not an event id of this stream.',
      details: { parameter: cursor.parameter },
    })
  // SSE-015: an id of another Session or Run is 404, existence of the other stream not revealed.
  if (event.aggregate_kind !== aggregate.kind || event.aggregate_id !== aggregate.id)
    throw new ApiError('NOT_FOUND', {
      message: 'The cursor is an event of another Session or Run.',
    })
  if (contentExpired || eventExpired(event.created_at, deps.clock.nowMs())) {
    // SSE-017, SSE-019: read state_url, then items_url, then reopen without a cursor.
    throw new ApiError('EVENT_CURSOR_EXPIRED', {
      message: contentExpired
        ? 'The cursor expired and the content itself is past retention.'
        : 'The cursor expired (events are kept 30 days); recover through details.',
      details: contentExpired ? { ...recovery(), content_expired: true } : { ...recovery() },
    })
  }
  return event.sequence
}

/** SSE-001: the stream; a HEAD request gets its headers only, never an open stream or a keep-alive timer. */
function answerStream(c: Context<Env>, opts: OpenStreamOptions): Response {
  if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS })
  const { faults } = c.var.deps
  // A stream fault rule (mock/faults/rules.ts) is taken when the stream opens.
  const rule = faults.hasStreamRules
    ? faults.take('stream', {
        method: c.req.method,
        path: c.req.path,
        key: opts.apiKey,
        operation: () => c.var.op?.operationId,
      })
    : undefined
  if (!rule) return openStream(c.var.deps, opts)
  const res = openStream(c.var.deps, { ...opts, fault: rule.action as StreamAction })
  res.headers.set('X-Mock-Fault', rule.id)
  return res
}

export function eventRoutes(app: Hono<Env>): void {
  route(app, 'streamSessionEvents', (c, req) => {
    const deps = c.var.deps
    const cursor = requestCursor(c, req)
    const aggregate: Aggregate = { kind: 'SESSION', id: req.params.session_id }
    const problem = accessProblem(deps, req.auth.key, aggregate)
    const contentExpired = problem?.code === 'SESSION_EXPIRED'
    if (problem && !(contentExpired && cursor !== undefined)) throw problem
    const recovery = (): Recovery => {
      const turn = latestTurnOfSession(deps.db, aggregate.id)
      return {
        state_url: turn
          ? `/v1/sessions/${aggregate.id}/turns/${turn.id}`
          : `/v1/sessions/${aggregate.id}`,
        items_url: `/v1/sessions/${aggregate.id}/items`,
      }
    }
    const after =
      cursor === undefined
        ? 0
        : resumeAfter(deps, c.var.auth!.key, cursor, aggregate, recovery, contentExpired)
    return answerStream(c, {
      aggregate,
      apiKey: req.auth.key,
      requestId: c.var.requestId,
      afterSequence: after,
    })
  })

  route(app, 'streamRunEvents', (c, req) => {
    const deps = c.var.deps
    const cursor = requestCursor(c, req)
    const aggregate: Aggregate = { kind: 'RUN', id: req.params.run_id }
    const problem = accessProblem(deps, req.auth.key, aggregate)
    // RET-013, SSE-019: as for a Session, a Run past its content retention is 410; with a cursor, the
    // cursor's EVENT_CURSOR_EXPIRED with content_expired true.
    const contentExpired = problem?.code === 'SESSION_EXPIRED'
    if (problem && !(contentExpired && cursor !== undefined)) throw problem
    const recovery = (): Recovery => ({
      state_url: `/v1/runs/${aggregate.id}`,
      items_url: `/v1/runs/${aggregate.id}/outputs`,
    })
    const after =
      cursor === undefined
        ? 0
        : resumeAfter(deps, c.var.auth!.key, cursor, aggregate, recovery, contentExpired)
    return answerStream(c, {
      aggregate,
      apiKey: req.auth.key,
      requestId: c.var.requestId,
      afterSequence: after,
    })
  })
}
