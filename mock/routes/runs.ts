/**
 * Runs (Endpoints > Workflows and Runs; States and transitions): the Run read {run, outputs, next_cursor},
 * output pages, cancel (202 CANCEL_REQUESTED until confirmed, 200 when already terminal), delete (reads
 * blocked at once) and the action paths: in the private beta no Run has actions (404); a Project with the
 * interactive-action facility lists pending ones in required_actions, serves approval content and resolves
 * approvals and questions (mock/execution/actions.ts).
 */
import type { Hono } from 'hono'
import type { Deps, Env } from '../deps.js'
import { visibleRun } from '../access/access.js'
import { runExpiresAt } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import {
  actionOf,
  approvalContent,
  actionState,
  assertNotEnded,
  requiredActions,
  resolveApproval,
  resolveQuestion,
} from '../execution/actions.js'
import { finishExecution, requestRunCancel } from '../execution/lifecycle.js'
import { reviewTooLarge } from '../domain/actions.js'
import { route } from '../http/route.js'
import type { Schema } from '../http/typed.js'
import { saveExecution, type RunRecord } from '../store/executions.js'
import { deleteExecutionArtifacts } from '../store/files.js'
import { outputsPage } from '../execution/outputs.js'
import { DEFAULT_LIST_ITEMS, pageOverheadBytes } from '../domain/list-limits.js'
import { decodeCursor, encodeCursor } from '../http/cursors.js'
import { iso } from '../util/iso.js'

/** RUN-002: the run object of the Run read; STATE-023: required_actions only while actions are pending. */
function runBody(deps: Deps, r: RunRecord): Schema<'Run'> {
  const executing =
    r.status === 'RUNNING' || (r.status === 'CANCEL_REQUESTED' && r.started_at !== null)
  return {
    id: r.id,
    workflow_id: r.workflow_id,
    published_version: r.published_version,
    status: r.status,
    // Only EXECUTING is given by the document; every other state shows null.
    phase: executing ? 'EXECUTING' : null,
    // RUN-005, BUD-007: total_su only once usage is settled.
    usage: { status: r.usage_status, total_su: r.usage_status === 'FINAL' ? r.spent_su : null },
    error: r.error,
    metadata: r.metadata,
    created_at: iso(r.created_at),
    deadline: iso(r.run.deadline_at),
    completed_at: iso(r.completed_at),
    expires_at: iso(runExpiresAt(r.completed_at, r.run.retention_days)),
    progress: { total: r.run.progress_total, completed: r.progress_completed ?? 0 },
    ...pendingActionsField(deps, r),
  }
}

/** {required_actions} when the Run waits for actions, else nothing (the field is present only then). */
function pendingActionsField(deps: Deps, r: RunRecord) {
  if (r.status !== 'REQUIRES_ACTION') return {}
  const pending = requiredActions(deps, r)
  return pending.length > 0 ? { required_actions: pending } : {}
}

/**
 * A page of a Run's outputs: RUN-010, RUN-011 none before the Run ends, then the published list; SIZE-014 the
 * page ends before the response passes 256 KiB (`around`: the rest of the response body).
 */
function outputPage(deps: Deps, r: RunRecord, after: number, limit: number, around: object) {
  if (!r.terminal) return { items: [], next_cursor: null }
  // OUT-004: items whose file retention passed show EXPIRED with ARTIFACT_EXPIRED.
  const page = outputsPage(deps, r.id, after, limit, pageOverheadBytes(around))
  return {
    items: page.items,
    next_cursor: page.more ? encodeCursor(r.id, page.last) : null,
  }
}

/** RUN-001: the Run read {run, outputs, next_cursor}. */
export function runDetail(deps: Deps, r: RunRecord): Schema<'RunDetail'> {
  const run = runBody(deps, r)
  const page = outputPage(deps, r, -1, DEFAULT_LIST_ITEMS, { run, outputs: [], next_cursor: null })
  return { run, outputs: page.items, next_cursor: page.next_cursor }
}

export function runRoutes(app: Hono<Env>): void {
  route(app, 'getRun', (c, req) => ({
    status: 200,
    body: runDetail(c.var.deps, visibleRun(c.var.deps, req.auth, req.params.run_id)),
  }))

  route(app, 'listRunOutputs', (c, req) => {
    const run = visibleRun(c.var.deps, req.auth, req.params.run_id)
    const { limit, after } = req.query
    // RUN-019: a cursor of another Run is INVALID_CURSOR, whatever the Run's state.
    const from = after === undefined ? -1 : decodeCursor(after, run.id)
    const page = outputPage(c.var.deps, run, from, limit ?? DEFAULT_LIST_ITEMS, {
      outputs: [],
      next_cursor: null,
    })
    return { status: 200, body: { outputs: page.items, next_cursor: page.next_cursor } }
  })

  route(app, 'cancelRun', (c, req) => {
    const deps = c.var.deps
    const run = visibleRun(c.var.deps, req.auth, req.params.run_id)
    // STATE-011: an already terminal Run is answered 200 and left unchanged.
    if (run.terminal) return { status: 200, body: runDetail(deps, run) }
    // STATE-008, STATE-009: CANCEL_REQUESTED until every child execution is confirmed ended.
    if (run.status !== 'CANCEL_REQUESTED') requestRunCancel(deps, run)
    return { status: 202, body: runDetail(deps, run), execution: run.id }
  })

  route(app, 'deleteRun', (c, req) => {
    const deps = c.var.deps
    const run = visibleRun(c.var.deps, req.auth, req.params.run_id)
    const nowMs = deps.clock.nowMs()
    // DEL-001: reads are blocked from now on; STATE-021: a running Run is canceled.
    run.deleted_at = nowMs
    saveExecution(deps.db, run)
    if (!run.terminal) {
      // Assumed code: the document names none for a Run canceled by its deletion; CANCELED is used.
      finishExecution(deps, run, 'CANCELED', 'CANCELED', 'The Run was deleted.')
    }
    deleteExecutionArtifacts(deps.db, run.id)
    return {
      status: 202,
      body: { id: run.id, kind: 'RUN', status: 'DELETE_ACCEPTED', accepted_at: iso(nowMs) },
    }
  })

  // RUN-022: the review content of an approval action, with its content_hash and the kind's decisions.
  route(app, 'getRunAction', (c, req) => {
    const deps = c.var.deps
    const run = visibleRun(c.var.deps, req.auth, req.params.run_id)
    const action = actionOf(deps, run.id, req.params.action_id)
    // Assumed: a question action has no review content; its questions are in required_actions.
    if (action.kind !== 'APPROVAL' || !action.material)
      throw new ApiError('NOT_FOUND', { message: 'No approval action with this id.' })
    assertNotEnded(deps, action, true)
    if (!action.content_available)
      throw new ApiError('APPROVAL_CONTENT_UNAVAILABLE', {
        message: 'The review content cannot be read now.',
        details: { action_id: action.id },
      })
    // ERR-035: review material over 100 rows or 256 KiB is not served.
    if (reviewTooLarge(action.material))
      throw new ApiError('APPROVAL_CONTENT_TOO_LARGE', {
        message: 'The review content is over 100 rows or 256 KiB.',
        details: { action_id: action.id },
      })
    return { status: 200, body: approvalContent(action.material) }
  })

  // RUN-023: resolve an approval (ApprovalResolveInput) or a question (ActionResolveInput); 202 ActionReceipt.
  route(app, 'resolveRunAction', (c, req) => {
    const deps = c.var.deps
    const body = req.body
    const scopes = req.auth.scopes
    // The operation is x-scope-by-body: its scope is checked here, before the Run is looked up.
    // ACT-023: approval permission is never gained automatically; a key resolving an approval without an
    // explicit actions:approve delegation is always ACTION_NOT_RESOLVABLE_BY_CALLER, whatever else it holds.
    if ('decision' in body && !scopes.includes('actions:approve')) {
      throw new ApiError('ACTION_NOT_RESOLVABLE_BY_CALLER', {
        message: 'Resolving an approval needs the explicit actions:approve delegation.',
      })
    }
    // ACT-024: answering a question action needs actions:resolve (actions:approve is not enough).
    if ('answers' in body && !scopes.includes('actions:resolve')) {
      throw new ApiError('INSUFFICIENT_SCOPE', {
        message: 'Answering a question action needs the actions:resolve scope.',
        details: { required_scopes: [['actions:resolve']] },
      })
    }
    const run = visibleRun(c.var.deps, req.auth, req.params.run_id)
    const action = actionOf(deps, run.id, req.params.action_id)
    // ERR-076: the Run's outcome is settled (it ended, other than by this action's own expiry, which stays
    // ACTION_EXPIRED): nothing can be resolved any more.
    if (run.terminal && actionState(deps, action) !== 'EXPIRED') {
      throw new ApiError('RUN_TERMINAL', {
        message: `The Run ended ${run.status}; its outcome is settled and its actions can no longer be resolved.`,
        details: { run_id: run.id, status: run.status },
      })
    }
    assertNotEnded(deps, action, false)
    if ('decision' in body) resolveApproval(deps, run, action, body)
    else resolveQuestion(deps, run, action, body)
    return {
      status: 202,
      execution: run.id,
      body: {
        action_id: action.id,
        status: 'RESOLVED',
        run_id: run.id,
        run_status: run.status,
        turn_id: null,
        turn_status: null,
        idempotency_expires_at: req.idempotencyExpiresAt,
        status_url: `/v1/runs/${run.id}`,
      },
    }
  })
}
