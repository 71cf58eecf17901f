/**
 * Runs (Endpoints > Workflows and Runs; States and transitions): the Run read {run, outputs, next_cursor},
 * output pages, cancel (202 CANCEL_REQUESTED until confirmed, 200 when already terminal), delete (reads
 * blocked at once) and the approval action paths, which in the private beta have no actions to show.
 */
import type { Context, Hono } from 'hono'
import type { Deps, Env } from '../deps.js'
import { runContentExpired, runExpiresAt } from '../domain/run.js'
import { ApiError } from '../errors.js'
import { finishExecution, requestRunCancel } from '../execution/executor.js'
import { route } from '../http/route.js'
import {
  getExecution,
  listOutputs,
  saveExecution,
  type ExecutionRecord,
} from '../store/executions.js'
import { deleteExecutionArtifacts } from '../store/files.js'
import { decodeCursor, encodeCursor } from './cursors.js'

const DEFAULT_PAGE = 50

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

type Run = ExecutionRecord & { run: NonNullable<ExecutionRecord['run']> }

/**
 * A Run of the key's Project that is neither deleted (DEL-001) nor past its content retention (RET-010);
 * else 404 NOT_FOUND. Assumed: the Run read paths document no 410, so expired Run content is answered 404.
 */
export function visibleRun(c: Context<Env>, id: string): Run {
  const e = getExecution(c.var.deps.db, id)
  if (
    !e ||
    e.kind !== 'RUN' ||
    !e.run ||
    e.project_id !== c.var.auth!.projectId ||
    (e.deleted_at ?? null) !== null ||
    runContentExpired(e.completed_at, e.run.retention_days, c.var.deps.clock.nowMs())
  ) {
    throw new ApiError('NOT_FOUND', { message: 'No such Run.' })
  }
  return e as Run
}

/** RUN-002: the run object of the Run read. */
function runBody(r: Run) {
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
  }
}

/** A page of a Run's outputs: RUN-010, RUN-011 none before the Run ends, then the published list. */
function outputPage(deps: Deps, r: Run, after: number, limit: number) {
  if (!r.terminal) return { items: [], next_cursor: null }
  const page = listOutputs(deps.db, r.id, after, limit)
  const more = listOutputs(deps.db, r.id, page.last, 1).items.length > 0
  return { items: page.items, next_cursor: more ? encodeCursor(r.id, page.last) : null }
}

/** RUN-001: the Run read {run, outputs, next_cursor}. */
export function runDetail(deps: Deps, r: Run) {
  const page = outputPage(deps, r, -1, DEFAULT_PAGE)
  return { run: runBody(r), outputs: page.items, next_cursor: page.next_cursor }
}

export function runRoutes(app: Hono<Env>): void {
  route(app, 'getRun', (c) => ({
    status: 200,
    body: runDetail(c.var.deps, visibleRun(c, c.req.param('run_id')!)),
  }))

  route(app, 'listRunOutputs', (c) => {
    const run = visibleRun(c, c.req.param('run_id')!)
    const { limit, after } = c.var.input!.query as { limit?: number; after?: string }
    // RUN-019: a cursor of another Run is INVALID_CURSOR, whatever the Run's state.
    const from = after === undefined ? -1 : decodeCursor(after, run.id)
    const page = outputPage(c.var.deps, run, from, limit ?? DEFAULT_PAGE)
    return { status: 200, body: { outputs: page.items, next_cursor: page.next_cursor } }
  })

  route(app, 'cancelRun', (c) => {
    const deps = c.var.deps
    const run = visibleRun(c, c.req.param('run_id')!)
    // STATE-011: an already terminal Run is answered 200 and left unchanged.
    if (run.terminal) return { status: 200, body: runDetail(deps, run) }
    // STATE-008, STATE-009: CANCEL_REQUESTED until every child execution is confirmed ended.
    if (run.status !== 'CANCEL_REQUESTED') requestRunCancel(deps, run)
    return { status: 202, body: runDetail(deps, run), execution: run.id }
  })

  route(app, 'deleteRun', (c) => {
    const deps = c.var.deps
    const run = visibleRun(c, c.req.param('run_id')!)
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

  // Interactive actions are not provided in the private beta: no Run has actions to read or resolve.
  route(app, 'getRunAction', (c) => {
    visibleRun(c, c.req.param('run_id')!)
    throw new ApiError('NOT_FOUND', { message: 'No such action.' })
  })

  route(app, 'resolveRunAction', (c) => {
    visibleRun(c, c.req.param('run_id')!)
    const body = c.var.input!.body as Record<string, unknown>
    // ACT-023: approval permission is never gained automatically; a key resolving an approval needs an
    // explicit actions:approve delegation (actions:resolve is for question actions).
    if ('decision' in body && !c.var.auth!.scopes.includes('actions:approve')) {
      throw new ApiError('ACTION_NOT_RESOLVABLE_BY_CALLER', {
        message: 'Resolving an approval needs the explicit actions:approve delegation.',
      })
    }
    throw new ApiError('NOT_FOUND', { message: 'No such action.' })
  })
}
