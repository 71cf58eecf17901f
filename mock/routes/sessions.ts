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
import { ApiError, apiErrorOf } from '../errors.js'
import { checkConcurrency, nextScenario, reserveSu } from '../execution/accept.js'
import { acceptExecution, finishExecution } from '../execution/lifecycle.js'
import { route, type Reply } from '../http/route.js'
import {
  actionOf,
  assertNotEnded,
  resolveQuestion,
  type QuestionResolve,
} from '../execution/actions.js'
import type { Deployment } from '../store/deployments.js'
import {
  countAdmitted,
  getExecution,
  insertSession,
  latestTurnOfSession,
  listOutputs,
  saveExecution,
  turnIdsOfSession,
  updateSession,
  type ExecutionRecord,
  type SessionRecord,
} from '../store/executions.js'
import { bindFileToExecution, deleteSessionFiles, getUsableInputFile } from '../store/files.js'
import { presentOutputs } from '../execution/outputs.js'
import { decodeCursor, encodeCursor } from '../http/cursors.js'

/** Session limits defaults of ExecutionLimits (Turn input and request options). */
const LIMIT_DEFAULTS = { execution_seconds: 3600, max_su: 100, queue_seconds: 600 }
const DEFAULT_PAGE = 50

type CreateBody = {
  input: ({ type: 'TEXT'; text: string } | { type: 'FILE'; file_id: string })[]
  limits?: Partial<typeof LIMIT_DEFAULTS>
  metadata?: Record<string, string>
}

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

/** Accepts a new Turn in a Session (creation or added input): limits defaults, budget, concurrency, scenario. */
function acceptTurn(
  c: Context<Env>,
  deployment: Deployment,
  session: SessionRecord,
  body: CreateBody,
): ExecutionRecord {
  const deps = c.var.deps
  const auth = c.var.auth!
  if (deployment.status !== 'ACTIVE')
    throw new ApiError('DEPLOYMENT_UNAVAILABLE', { message: 'The Deployment is RETIRED.' })
  const files = body.input
    .filter((i) => i.type === 'FILE')
    .map((i) => (i as { file_id: string }).file_id)
  if (files.length > 20 || new Set(files).size !== files.length) {
    throw new ApiError('TOO_MANY_FILES', { message: 'At most 20 input files, none listed twice.' })
  }
  const limits = { ...LIMIT_DEFAULTS, ...body.limits }
  const nowMs = deps.clock.nowMs()
  const turnId = deps.ids.uuid()
  // FILE items: READY input files of this Project (or this Session), not bound to another execution, of a type
  // the Deployment accepts (SES-006, FILE-009, DEP-005).
  for (const fileId of files) {
    const usable = getUsableInputFile(deps.db, fileId, {
      projectId: auth.projectId,
      nowMs,
      sessionId: session.id,
      executionId: turnId,
      acceptedMimeTypes: deployment.input_mime_types,
    })
    if (!usable.ok) {
      throw apiErrorOf(usable.code, {
        message: `Input file ${fileId} cannot be used (${usable.reason}).`,
        details: { file_id: fileId, reason: usable.reason },
      })
    }
  }
  checkConcurrency(deps, auth.projectId, countAdmitted(deps.db, auth.projectId))
  reserveSu(deps, auth.projectId, limits.max_su)
  const scenario = nextScenario(deps, deployment.id, deployment.outputs)
  updateSession(deps.db, session.id, { last_activity_at: nowMs })
  // RET-007: a file given as Turn input is kept 30 days from now and belongs to this Session.
  for (const fileId of files) bindFileToExecution(deps.db, fileId, turnId, nowMs, session.id)
  return acceptExecution(deps, {
    id: turnId,
    kind: 'TURN',
    project_id: auth.projectId,
    api_key: auth.key,
    deployment_id: deployment.id,
    session_id: session.id,
    workflow_id: null,
    published_version: null,
    scenario: scenario.name,
    steps: scenario.steps,
    input: body.input,
    metadata: body.metadata ?? {},
    execution_seconds: limits.execution_seconds,
    queue_seconds: limits.queue_seconds,
    max_su: limits.max_su,
  })
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
    const deployment = callableDeployment(c.var.deps, c.var.auth!, c.req.param('deployment_id')!)
    const body = c.var.input!.body as CreateBody
    const deps = c.var.deps
    const nowMs = deps.clock.nowMs()
    const session: SessionRecord = {
      id: deps.ids.uuid(),
      project_id: deployment.project_id,
      deployment_id: deployment.id,
      status: 'ACTIVE',
      deleted_at: null,
      metadata: body.metadata ?? {},
      created_at: nowMs,
      last_activity_at: nowMs,
      workflow_run_id: null,
    }
    if (deployment.status !== 'ACTIVE')
      throw new ApiError('DEPLOYMENT_UNAVAILABLE', { message: 'The Deployment is RETIRED.' })
    insertSession(deps.db, session)
    return turnReceipt(c, acceptTurn(c, deployment, session, body))
  })

  route(app, 'getSession', (c) => ({
    status: 200,
    body: sessionDetail(
      c.var.deps,
      visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!),
    ),
  }))

  route(app, 'addTurn', (c) => {
    const session = visibleSession(c.var.deps, c.var.auth!, c.req.param('session_id')!)
    if (session.status === 'CLOSED') throw new ApiError('SESSION_CLOSED')
    const current = latestTurnOfSession(c.var.deps.db, session.id)
    if (current && !current.terminal)
      throw new ApiError('SESSION_BUSY', { details: { turn_id: current.id } })
    const deployment = callableDeployment(c.var.deps, c.var.auth!, session.deployment_id)
    return turnReceipt(c, acceptTurn(c, deployment, session, c.var.input!.body as CreateBody))
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
