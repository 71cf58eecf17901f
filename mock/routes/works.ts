/**
 * Organization works (Usage and works; shapes assumed, see spec/openapi.yaml x-assumed): POST /v1/works
 * creates a work (or a new revision of the same work, named by its title) and starts its preparation;
 * GET /v1/preparations lists them (limit 1-100, default 50; after = the last id of the previous page);
 * GET /v1/preparations/{id} reads one; POST /v1/preparations/{id}/answers answers its questions. The rules
 * live in mock/domain/preparation.ts; this module maps them to HTTP.
 */
import type { Context, Hono } from 'hono'
import type { AuthInfo, Env } from '../deps.js'
import {
  isTerminal,
  newPreparation,
  observe,
  parseWorkInput,
  plannedQuestions,
  transition,
  workKey,
  workStatus,
  type PreparationError,
  type PreparationState,
} from '../domain/preparation.js'
import { ApiError } from '../errors.js'
import { DEFAULT_LIST_ITEMS, fittingCount, pageOverheadBytes } from '../domain/list-limits.js'
import { route } from '../http/route.js'
import type { Reply, Schema, TypedRequest } from '../http/typed.js'
import { packageDigest, preparationView } from '../works/preparations.js'
import {
  getPreparation,
  getWorkByKey,
  insertPreparation,
  listPreparationsPage,
  savePreparationState,
  saveWork,
  type PreparationRecord,
  type WorkRecord,
} from '../store/works.js'
import { iso } from '../util/iso.js'

/** The Work record (assumed shape; spec Work). */
function workView(w: WorkRecord, latest: PreparationState): Schema<'Work'> {
  return {
    id: w.id,
    revision: w.revision,
    status: workStatus(latest),
    preparation_id: w.latest_preparation_id,
    title: w.title,
    description: w.description,
    checklist: w.checklist,
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  }
}

/** A preparation of the key's Project, observed at the current virtual time; else 404 NOT_FOUND. */
function visiblePreparation(c: Context<Env>, auth: AuthInfo, id: string): PreparationRecord {
  const p = getPreparation(c.var.deps.db, id)
  if (p?.project_id !== auth.projectId)
    throw new ApiError('NOT_FOUND', { message: 'No such preparation.' })
  return { ...p, state: observe(p.state, c.var.deps.clock.nowMs()) }
}

/** The HTTP error of a refused preparation transition (statuses from the catalog). */
function preparationError(e: PreparationError): ApiError {
  const opts = { message: e.message, details: e.details }
  switch (e.code) {
    case 'REVISION_CONFLICT':
      return new ApiError('REVISION_CONFLICT', opts)
    case 'INVALID_TRANSITION':
      return new ApiError('INVALID_TRANSITION', opts)
    case 'QUESTION_NOT_FOUND':
      return new ApiError('QUESTION_NOT_FOUND', opts)
    case 'PACKAGE_CHANGED':
      return new ApiError('PACKAGE_CHANGED', opts)
    case 'INVALID_REQUEST':
      return new ApiError('INVALID_REQUEST', opts)
    case 'ACTION_NOT_RESOLVABLE_BY_CALLER':
      return new ApiError('ACTION_NOT_RESOLVABLE_BY_CALLER', opts)
  }
}

/** POST /v1/works: a new work, or a new revision of the same-titled work whose preparation has ended. */
function createWork(c: Context<Env>, req: TypedRequest<'createWork'>): Reply<'createWork'> {
  const { db, clock, ids } = c.var.deps
  const projectId = req.auth.projectId
  const parsed = parseWorkInput(req.body)
  if ('code' in parsed) {
    if (parsed.code === 'INVALID_INPUT')
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message: parsed.message,
        details: parsed.details,
      })
    throw new ApiError('INVALID_SPEC', { message: parsed.message, details: parsed.details })
  }
  const nowMs = clock.nowMs()
  const key = workKey(parsed.title)
  const existing = getWorkByKey(db, projectId, key)
  if (existing) {
    const latest = getPreparation(db, existing.latest_preparation_id)!
    if (!isTerminal(observe(latest.state, nowMs))) {
      throw new ApiError('PREPARATION_IN_PROGRESS', {
        message: 'A preparation of this work (same title) is running.',
        details: { preparation_id: latest.id, work_id: existing.id },
      })
    }
  }
  // REVISION_CONFLICT: expected_revision, when sent, names the revision the caller read (none for a new work).
  if (parsed.expected_revision !== undefined && parsed.expected_revision !== existing?.revision) {
    throw new ApiError('REVISION_CONFLICT', {
      message: 'The work changed since it was read.',
      details: { current_revision: existing?.revision ?? null },
    })
  }
  const workId = existing?.id ?? ids.uuid()
  const revision = (existing?.revision ?? 0) + 1
  const state = newPreparation(plannedQuestions(parsed), packageDigest(workId, revision, 0), nowMs)
  const prep = insertPreparation(db, {
    id: ids.uuid(),
    project_id: projectId,
    work_id: workId,
    state,
  })
  const work: WorkRecord = {
    id: workId,
    project_id: projectId,
    title_key: key,
    title: parsed.title,
    description: parsed.description,
    checklist: parsed.checklist ?? null,
    revision,
    latest_preparation_id: prep.id,
    created_at: existing?.created_at ?? nowMs,
    updated_at: nowMs,
  }
  saveWork(db, work)
  return { status: 201, body: workView(work, state) }
}

/** GET /v1/preparations paging: limit and after are declared (x-assumed) in the spec and validated there. */
function page(
  c: Context<Env>,
  req: TypedRequest<'listPreparations'>,
): { limit: number; afterSeq: number } {
  const query = req.query
  const limit = query.limit ?? DEFAULT_LIST_ITEMS
  const after = query.after
  if (after === undefined) return { limit, afterSeq: 0 }
  const p = getPreparation(c.var.deps.db, after)
  if (p?.project_id !== req.auth.projectId)
    throw new ApiError('INVALID_CURSOR', {
      message: 'after is the next_cursor of a previous page.',
      details: { parameter: 'after' },
    })
  return { limit, afterSeq: p.seq }
}

export function worksRoutes(app: Hono<Env>): void {
  route(app, 'createWork', createWork)

  route(app, 'listPreparations', (c, req) => {
    const { limit, afterSeq } = page(c, req)
    const { db, clock } = c.var.deps
    const rows = listPreparationsPage(db, req.auth.projectId, afterSeq, limit + 1)
    // SIZE-014: at most `limit` items, ending before the response passes 256 KiB.
    const views = rows
      .slice(0, limit)
      .map((p) => preparationView(p, observe(p.state, clock.nowMs())))
    const n = fittingCount(views, pageOverheadBytes({ items: [], next_cursor: null }))
    return {
      status: 200,
      body: {
        items: views.slice(0, n),
        next_cursor: rows.length > n ? rows[n - 1]!.id : null,
      },
    }
  })

  route(app, 'getPreparation', (c, req) => {
    const p = visiblePreparation(c, req.auth, req.params.preparation_id)
    return { status: 200, body: preparationView(p, p.state) }
  })

  route(app, 'answerPreparation', (c, req) => {
    const deps = c.var.deps
    const { auth, body } = req
    // Read, check and write in one transaction: answers apply atomically (WORK-004).
    return deps.db.tx((): Reply<'answerPreparation'> => {
      const p = visiblePreparation(c, auth, req.params.preparation_id)
      const t = transition(p.state, {
        type: 'answer',
        at: deps.clock.nowMs(),
        expectedRevision: body.expected_preparation_revision,
        answers: body.answers,
        actor: body.actor ?? null,
        canApprove: auth.scopes.includes('works:approve'),
      })
      if (!t.ok) throw preparationError(t.error)
      savePreparationState(deps.db, p.id, t.state)
      return { status: 200, body: preparationView(p, t.state) }
    })
  })
}
