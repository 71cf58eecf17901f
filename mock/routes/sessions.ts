/**
 * Sessions and Turns (Endpoints > Sessions and Turns; States and transitions): create a Session with its first
 * Turn, read Turns and their outputs, and the assumed paths to read a Session, add input (a new Turn), cancel a
 * Turn and close a Session, and delete a Session. One Turn at a time (409 SESSION_BUSY); a closed Session
 * refuses input (409 SESSION_CLOSED); a RETIRED Deployment takes no new work (409 DEPLOYMENT_UNAVAILABLE).
 */
import type { Context, Hono } from 'hono'
import { callableDeployment, visibleSession } from '../access/access.js'
import type { Deps, Env } from '../deps.js'
import { sessionExpiresAt } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { acceptInput, acceptSession, type TurnRequest } from '../execution/accept.js'
import { finishExecution } from '../execution/lifecycle.js'
import { route, type Reply } from '../http/route.js'
import {
  actionOf,
  assertNotEnded,
  resolveQuestion,
  type QuestionResolve,
} from '../execution/actions.js'
import {
  getExecution,
  latestTurnOfSession,
  listOutputs,
  saveExecution,
  turnIdsOfSession,
  updateSession,
  type ExecutionRecord,
  type SessionRecord,
} from '../store/executions.js'
import { deleteSessionFiles } from '../store/files.js'
import { presentOutputs } from '../execution/outputs.js'
import { decodeCursor, encodeCursor } from '../http/cursors.js'

const DEFAULT_PAGE = 50

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

function visibleTurn(c: Context<Env>, session: SessionRecord, turnId: string): ExecutionRecord {
  const turn = getExecution(c.var.deps.db, turnId)
  if (!turn || turn.session_id !== session.id)
    throw new ApiError('NOT_FOUND', { message: 'No such Turn.' })
  return turn
}

/** The Turn detail (Turn detail table). */
export function turnDetail(deps: Deps, t: ExecutionRecord) {
  const page = listOutputs(deps.db, t.id, -1, DEFAULT_PAGE)
  return {
    id: t.id,
    session_id: t.session_id,
    status: t.status,
    usage: { status: t.usage_status, total_su: t.usage_status === 'FINAL' ? t.spent_su : null },
    error: t.error,
    created_at: iso(t.created_at),
    started_at: iso(t.started_at),
    completed_at: iso(t.completed_at),
    // OUT-004: items whose file retention passed show EXPIRED with ARTIFACT_EXPIRED (execution/outputs.ts).
    outputs: presentOutputs(deps, page.items),
    next_cursor: page.items.length === DEFAULT_PAGE ? encodeCursor(t.id, page.last) : null,
  }
}

function sessionDetail(deps: Deps, s: SessionRecord) {
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

function turnReceipt(c: Context<Env>, turn: ExecutionRecord): Reply {
  return {
    status: 202,
    execution: turn.id,
    body: {
      session_id: turn.session_id,
      turn_id: turn.id,
      status: 'QUEUED',
      idempotency_expires_at: c.var.input!.idempotencyExpiresAt,
      status_url: `/v1/sessions/${turn.session_id}/turns/${turn.id}`,
      events_url: `/v1/sessions/${turn.session_id}/events`,
    },
  }
}

/** Cancel: CANCEL_REQUESTED now, CANCELED with code CANCELED one second later (assumed timing). */
function requestCancel(deps: Deps, e: ExecutionRecord, code: string): void {
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
  route(app, 'createSession', (c) => {
    const { deps, auth, input } = c.var
    const deployment = callableDeployment(deps, auth!, c.req.param('deployment_id')!)
    return turnReceipt(c, acceptSession(deps, auth!, deployment, input!.body as TurnRequest))
  })

  route(app, 'getSession', (c) => ({
    status: 200,
    body: sessionDetail(
      c.var.deps,
      visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!),
    ),
  }))

  route(app, 'addTurn', (c) => {
    const { deps, auth, input } = c.var
    const session = visibleSession(deps, auth!, c.req.param('session_id')!)
    const deployment = callableDeployment(deps, auth!, session.deployment_id)
    return turnReceipt(c, acceptInput(deps, auth!, deployment, session, input!.body as TurnRequest))
  })

  route(app, 'getTurn', (c) => {
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
    return {
      status: 200,
      body: turnDetail(c.var.deps, visibleTurn(c, session, c.req.param('turn_id')!)),
    }
  })

  route(app, 'listTurnOutputs', (c) => {
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
    const turn = visibleTurn(c, session, c.req.param('turn_id')!)
    const { limit, after } = c.var.input!.query as { limit?: number; after?: string }
    const from = after === undefined ? -1 : decodeCursor(after, turn.id)
    const page = listOutputs(c.var.deps.db, turn.id, from, limit ?? DEFAULT_PAGE)
    const more = listOutputs(c.var.deps.db, turn.id, page.last, 1).items.length > 0
    return {
      status: 200,
      body: {
        outputs: presentOutputs(c.var.deps, page.items),
        next_cursor: more ? encodeCursor(turn.id, page.last) : null,
      },
    }
  })

  route(app, 'cancelTurn', (c) => {
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
    const turn = visibleTurn(c, session, c.req.param('turn_id')!)
    if (turn.terminal) return { status: 200, body: turnDetail(c.var.deps, turn) }
    requestCancel(c.var.deps, turn, 'CANCELED')
    return { status: 202, body: turnDetail(c.var.deps, turn), execution: turn.id }
  })

  // Assumed path: answers a question action of a Turn (ActionResolveInput, actions:resolve). In the private beta
  // a Turn never has one (404); with the interactive-action facility it resumes the Turn (execution/actions.ts).
  route(app, 'resolveTurnAction', (c) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
    const turn = visibleTurn(c, session, c.req.param('turn_id')!)
    const action = actionOf(deps, turn.id, c.req.param('action_id')!)
    assertNotEnded(deps, action, false)
    resolveQuestion(deps, turn, action, c.var.input!.body as QuestionResolve)
    return {
      status: 202,
      execution: turn.id,
      body: {
        action_id: action.id,
        status: 'RESOLVED',
        session_id: session.id,
        turn_id: turn.id,
        turn_status: turn.status,
        run_id: null,
        run_status: null,
        idempotency_expires_at: c.var.input!.idempotencyExpiresAt,
        status_url: `/v1/sessions/${session.id}/turns/${turn.id}`,
      },
    }
  })

  route(app, 'closeSession', (c) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
    const current = latestTurnOfSession(deps.db, session.id)
    if (current && !current.terminal)
      throw new ApiError('SESSION_BUSY', {
        message: 'Cancel or wait for the running Turn before closing.',
        details: { turn_id: current.id },
      })
    updateSession(deps.db, session.id, { status: 'CLOSED' })
    return { status: 200, body: sessionDetail(deps, { ...session, status: 'CLOSED' }) }
  })

  route(app, 'deleteSession', (c) => {
    const deps = c.var.deps
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
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
