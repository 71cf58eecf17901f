/**
 * Control API extensions for interactive actions (mock only, under /_mock): switch a Project's facility on or
 * off without another fixture file, and change an approval's review content to rehearse
 * ACTION_CONTENT_CHANGED, APPROVAL_CONTENT_TOO_LARGE and APPROVAL_CONTENT_UNAVAILABLE.
 *
 *   GET  /_mock/projects/{project_id}/interactive-actions              -> {project_id, enabled}
 *   POST /_mock/projects/{project_id}/interactive-actions {enabled}    -> {project_id, enabled}
 *   POST /_mock/runs/{run_id}/actions/{action_id}/change-content
 *        {summary?, rows?, available?}                                 -> {action_id, content_hash, rows, available}
 */
import { Hono, type Context } from 'hono'
import { body } from '../http/control-body.js'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { actionOf, actionState, changeApprovalContent } from '../execution/actions.js'
import { interactiveActionsEnabled, setInteractiveActions } from '../store/actions.js'
import { getExecution } from '../store/executions.js'
import { getProject } from '../store/projects.js'
import { controlBodyAjv as ajv } from '../util/ajv.js'

const toggleBody = ajv.compile<{ enabled: boolean }>({
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: { enabled: { type: 'boolean' } },
})
const changeBody = ajv.compile<{
  summary?: string
  rows?: Record<string, unknown>[]
  available?: boolean
}>({
  type: 'object',
  additionalProperties: false,
  properties: {
    summary: { type: 'string', maxLength: 10000 },
    // More than 100 rows is allowed on purpose: it rehearses APPROVAL_CONTENT_TOO_LARGE.
    rows: { type: 'array', maxItems: 10000, items: { type: 'object' } },
    available: { type: 'boolean' },
  },
})

function projectIdOr404(c: Context<Env>): string {
  const id = c.req.param('project_id')!
  if (!getProject(c.var.deps.db, id))
    throw new ApiError('NOT_FOUND', { message: `no Project with id "${id}"` })
  return id
}

export function controlActionRoutes(): Hono<Env> {
  const app = new Hono<Env>()

  app.get('/projects/:project_id/interactive-actions', (c) => {
    const id = projectIdOr404(c)
    return c.json({ project_id: id, enabled: interactiveActionsEnabled(c.var.deps.db, id) })
  })

  // Only later action_required steps are affected: actions already pending stay resolvable.
  app.post('/projects/:project_id/interactive-actions', async (c) => {
    const { enabled } = await body(c, toggleBody)
    const id = projectIdOr404(c)
    setInteractiveActions(c.var.deps.db, id, enabled)
    return c.json({ project_id: id, enabled })
  })

  app.post('/runs/:run_id/actions/:action_id/change-content', async (c) => {
    const patch = await body(c, changeBody)
    const deps = c.var.deps
    const runId = c.req.param('run_id')
    const run = getExecution(deps.db, runId)
    if (!run || run.kind !== 'RUN')
      throw new ApiError('NOT_FOUND', { message: `no Run with id "${runId}"` })
    const result = deps.db.tx(() => {
      const action = actionOf(deps, run.id, c.req.param('action_id'))
      if (action.kind !== 'APPROVAL')
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: 'only an approval action has review content',
        })
      if (actionState(deps, action) !== 'PENDING')
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: `the action is ${actionState(deps, action)}, not PENDING`,
        })
      const hash = changeApprovalContent(deps, action, patch)
      return {
        action_id: action.id,
        content_hash: hash,
        rows: action.material?.rows?.length ?? 0,
        available: action.content_available,
      }
    })
    return c.json(result)
  })

  return app
}
