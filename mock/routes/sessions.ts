/**
 * Sessions and Turns (Endpoints > Sessions and Turns; States and transitions): create a Session with its first
 * Turn, read Turns and their outputs, and the assumed paths to read a Session, add input (a new Turn), cancel a
 * Turn and close a Session, and delete a Session. One Turn at a time (409 SESSION_BUSY); a closed Session
 * refuses input (409 SESSION_CLOSED); a RETIRED Deployment takes no new work (409 DEPLOYMENT_UNAVAILABLE).
 */
import type { Context, Hono } from 'hono'
import type { ErrorCode } from '../../spec/index.js'
import { callableDeployment, visibleSession } from '../access/access.js'
import type { Deps, Env } from '../deps.js'
import { sessionExpiresAt } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { acceptInput, acceptSession, sessionUpdating } from '../execution/accept.js'
import { finishExecution } from '../execution/lifecycle.js'
import { route } from '../http/route.js'
import { turnReceiptBody } from '../http/receipt-bodies.js'
import type { Reply, Schema, TypedRequest } from '../http/typed.js'
import { actionOf, assertNotEnded, resolveQuestion } from '../execution/actions.js'
import {
  getExecution,
  latestTurnOfSession,
  saveExecution,
  turnIdsOfSession,
  updateSession,
  viewExecution,
  type ExecutionRecord,
  type ExecutionStatus,
  type SessionRecord,
  type TurnRecord,
} from '../store/executions.js'
import { deleteSessionFiles } from '../store/files.js'
import { outputsPage } from '../execution/outputs.js'
import { DEFAULT_LIST_ITEMS, pageOverheadBytes } from '../domain/list-limits.js'
import { decodeCursor, encodeCursor } from '../http/cursors.js'
import { iso } from '../util/iso.js'

/** A Turn's status: PARTIALLY_SUCCEEDED is reached only by a Run (runEnd), never by a Turn. */
function turnStatus(status: ExecutionStatus): Schema<'TurnStatus'> {
  if (status === 'PARTIALLY_SUCCEEDED') throw new Error('a Turn never ends PARTIALLY_SUCCEEDED')
  return status
}

/** A Turn of `session`, the caller's own copy (to change and save); else 404 NOT_FOUND. */
function visibleTurn(
  c: Context<Env>,
  session: Readonly<SessionRecord>,
  turnId: string,
): ExecutionRecord {
  return ofSession(session, getExecution(c.var.deps.db, turnId))
}

/** A Turn of `session` to read only (the kept record, no copy: a polled Turn); else 404 NOT_FOUND. */
function readableTurn(
  c: Context<Env>,
  session: Readonly<SessionRecord>,
  turnId: string,
): Readonly<ExecutionRecord> {
  return ofSession(session, viewExecution(c.var.deps.db, turnId))
}

function ofSession<T extends Readonly<ExecutionRecord>>(
  session: Readonly<SessionRecord>,
  turn: T | undefined,
): T {
  if (!turn || turn.session_id !== session.id)
    throw new ApiError('NOT_FOUND', { message: 'No such Turn.' })
  return turn
}

/** The Turn detail (Turn detail table) of a Turn of `session`. */
export function turnDetail(
  deps: Deps,
  session: Readonly<SessionRecord>,
  t: Readonly<ExecutionRecord>,
): Schema<'Turn'> {
  const detail: Schema<'Turn'> = {
    id: t.id,
    session_id: session.id,
    status: turnStatus(t.status),
    usage: { status: t.usage_status, total_su: t.usage_status === 'FINAL' ? t.spent_su : null },
    error: t.error,
    created_at: iso(t.created_at),
    started_at: iso(t.started_at),
    completed_at: iso(t.completed_at),
    outputs: [],
    next_cursor: null,
  }
  // SES-022, SIZE-014: a cursor only when outputs remain (never to an empty page); the page ends before the
  // response passes 256 KiB (the detail without outputs is measured only when that could matter). OUT-004:
  // items past file retention show EXPIRED (execution/outputs.ts).
  const page = outputsPage(deps, t.id, -1, DEFAULT_LIST_ITEMS, () => pageOverheadBytes(detail))
  detail.outputs = page.items
  detail.next_cursor = page.more ? encodeCursor(t.id, page.last) : null
  return detail
}

function sessionDetail(deps: Deps, s: Readonly<SessionRecord>): Schema<'Session'> {
  return {
    id: s.id,
    deployment_id: s.deployment_id,
    status: s.status,
    created_at: iso(s.created_at),
    last_activity_at: iso(s.last_activity_at),
    expires_at: iso(sessionExpiresAt(s.last_activity_at)),
    metadata: s.metadata,
    turn_ids: turnIdsOfSession(deps.db, s.id),
  }
}

/** The 202 answer to a new Turn (SessionReceipt and TurnReceipt have the same fields). */
function turnReceipt(
  req: TypedRequest<'createSession' | 'addTurn'>,
  turn: TurnRecord,
): Reply<'createSession'> & Reply<'addTurn'> {
  return {
    status: 202,
    execution: turn.id,
    body: turnReceiptBody(turn.session_id, turn.id, req.idempotencyExpiresAt),
  }
}

/** Cancel: CANCEL_REQUESTED now, CANCELED with code CANCELED one second later (assumed timing). */
function requestCancel(deps: Deps, e: ExecutionRecord, code: ErrorCode): void {
  if (e.status !== 'CANCEL_REQUESTED') {
    e.status = 'CANCEL_REQUESTED'
    saveExecution(deps.db, e)
  }
  deps.scheduler.schedule(
    'execution.cancel',
    deps.clock.nowMs() + 1000,
    { id: e.id, code },
    { subject: e.id },
  )
}

export function sessionRoutes(app: Hono<Env>): void {
  route(app, 'createSession', (c, req) => {
    const deps = c.var.deps
    const deployment = callableDeployment(deps, req.auth, req.params.deployment_id)
    return turnReceipt(req, acceptSession(deps, req.auth, deployment, req.body))
  })

  route(app, 'getSession', (c, req) => ({
    status: 200,
    body: sessionDetail(c.var.deps, visibleSession(c.var.deps, req.auth, req.params.session_id)),
  }))

  route(app, 'addTurn', (c, req) => {
    const deps = c.var.deps
    const session = visibleSession(deps, req.auth, req.params.session_id)
    const deployment = callableDeployment(deps, req.auth, session.deployment_id)
    return turnReceipt(req, acceptInput(deps, req.auth, deployment, session, req.body))
  })

  route(app, 'getTurn', (c, req) => {
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const turn = readableTurn(c, session, req.params.turn_id)
    return { status: 200, body: turnDetail(c.var.deps, session, turn) }
  })

  route(app, 'listTurnOutputs', (c, req) => {
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const turn = readableTurn(c, session, req.params.turn_id)
    const { limit, after } = req.query
    const from = after === undefined ? -1 : decodeCursor(after, turn.id)
    const page = outputsPage(
      c.var.deps,
      turn.id,
      from,
      limit ?? DEFAULT_LIST_ITEMS,
      pageOverheadBytes({ outputs: [], next_cursor: null }),
    )
    return {
      status: 200,
      body: {
        outputs: page.items,
        next_cursor: page.more ? encodeCursor(turn.id, page.last) : null,
      },
    }
  })

  route(app, 'cancelTurn', (c, req) => {
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const turn = visibleTurn(c, session, req.params.turn_id)
    if (turn.terminal) return { status: 200, body: turnDetail(c.var.deps, session, turn) }
    requestCancel(c.var.deps, turn, 'CANCELED')
    return { status: 202, body: turnDetail(c.var.deps, session, turn), execution: turn.id }
  })

  // Assumed path: answers a question action of a Turn (ActionResolveInput, actions:resolve). In the private beta
  // a Turn never has one (404); with the interactive-action facility it resumes the Turn (execution/actions.ts).
  route(app, 'resolveTurnAction', (c, req) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const turn = visibleTurn(c, session, req.params.turn_id)
    const action = actionOf(deps, turn.id, req.params.action_id)
    assertNotEnded(deps, action, false)
    resolveQuestion(deps, turn, action, req.body)
    return {
      status: 202,
      execution: turn.id,
      body: {
        action_id: action.id,
        status: 'RESOLVED',
        session_id: session.id,
        turn_id: turn.id,
        turn_status: turnStatus(turn.status),
        run_id: null,
        run_status: null,
        idempotency_expires_at: req.idempotencyExpiresAt,
        status_url: `/v1/sessions/${session.id}/turns/${turn.id}`,
      },
    }
  })

  route(app, 'closeSession', (c, req) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const current = latestTurnOfSession(deps.db, session.id)
    sessionUpdating(current)
    if (current && !current.terminal)
      throw new ApiError('SESSION_BUSY', {
        message: 'Cancel or wait for the running Turn before closing.',
        details: { turn_id: current.id },
      })
    updateSession(deps.db, session.id, { status: 'CLOSED' })
    return { status: 200, body: sessionDetail(deps, { ...session, status: 'CLOSED' }) }
  })

  route(app, 'deleteSession', (c, req) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, req.auth, req.params.session_id)
    const nowMs = deps.clock.nowMs()
    updateSession(deps.db, session.id, { deleted_at: nowMs })
    // Retention: deleting a Session deletes its files.
    deleteSessionFiles(deps.db, session.id)
    const current = latestTurnOfSession(deps.db, session.id)
    if (current && !current.terminal)
      finishExecution(deps, current, 'CANCELED', 'SESSION_DELETED', 'The Session was deleted.')
    return {
      status: 202,
      body: { id: session.id, kind: 'SESSION', status: 'DELETE_ACCEPTED', accepted_at: iso(nowMs) },
    }
  })
}
