/**
 * Control API extensions for Workflows and Runs (mock only, under /_mock): republish a workflow, stop it
 * (its non-terminal Runs end CANCELED with WORKFLOW_UNAVAILABLE), change its organization data (grant, uses,
 * store reachable: rehearse WORKFLOW_DATA_DENIED and SOURCE_UNAVAILABLE) and make a Run's cancel end FAILED
 * with EXTERNAL_EFFECT_UNKNOWN. Mounted at /_mock by createApp.
 */
import { Hono, type Context } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { body } from '../http/control-body.js'
import { finishExecution } from '../execution/lifecycle.js'
import { getExecution, openRunsOfWorkflow, saveExecution } from '../store/executions.js'
import { DATA_SCOPE_PATTERN, type OrganizationData } from '../domain/organization-data.js'
import { controlBodyAjv } from '../util/ajv.js'
import {
  getWorkflow,
  publishWorkflow,
  setOrganizationData,
  stopWorkflow,
  type Workflow,
} from '../store/workflows.js'

type PublishBody = Partial<Pick<Workflow, 'input_schema' | 'outputs' | 'steps' | 'allows_partial'>>

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** {} or {input_schema?, outputs?, steps?, allows_partial?}; unknown fields refused. */
function isPublishBody(v: unknown): v is PublishBody {
  if (!isObject(v)) return false
  const allowed = new Set(['input_schema', 'outputs', 'steps', 'allows_partial'])
  if (!Object.keys(v).every((k) => allowed.has(k))) return false
  if (v.input_schema !== undefined && !isObject(v.input_schema)) return false
  if (v.steps !== undefined && !(Number.isInteger(v.steps) && (v.steps as number) >= 0))
    return false
  if (v.allows_partial !== undefined && typeof v.allows_partial !== 'boolean') return false
  if (v.outputs !== undefined) {
    if (!Array.isArray(v.outputs)) return false
    const ok = v.outputs.every(
      (o) =>
        isObject(o) &&
        typeof o.key === 'string' &&
        ['TEXT', 'JSON', 'FILE', 'URL'].includes(o.type as string) &&
        typeof o.required === 'boolean',
    )
    if (!ok) return false
  }
  return true
}

/** {grant?, uses?, source_reachable?}: lists of distinct `<source>:READ|WRITE` entries (at most 50). */
const scopeList = {
  type: 'array',
  maxItems: 50,
  uniqueItems: true,
  items: { type: 'string', pattern: DATA_SCOPE_PATTERN.source },
}
const organizationDataBody = controlBodyAjv.compile<Partial<OrganizationData>>({
  type: 'object',
  additionalProperties: false,
  properties: { grant: scopeList, uses: scopeList, source_reachable: { type: 'boolean' } },
})

const isEmpty = (v: unknown): v is Record<string, never> =>
  isObject(v) && Object.keys(v).length === 0

function workflowOr404(c: Context<Env>): Workflow {
  const id = c.req.param('workflow_id')!
  const w = getWorkflow(c.var.deps.db, id)
  if (!w) throw new ApiError('NOT_FOUND', { message: `no Workflow with id "${id}"` })
  return w
}

/** A fresh sub-app of the Workflow and Run extensions, mounted by createApp at /_mock. */
export function controlRunRoutes(): Hono<Env> {
  const app = new Hono<Env>()
  // Republish: published_version + 1, available again; optional new input_schema, outputs, steps,
  // allows_partial. Accepted Runs keep what they froze at acceptance (RUN-033, IDEM-006).
  app.post('/workflows/:workflow_id/publish', async (c) => {
    const patch = await body(c, isPublishBody)
    const w = workflowOr404(c)
    const next = c.var.deps.db.tx(() => publishWorkflow(c.var.deps.db, w.id, patch))!
    return c.json({ id: next.id, published_version: next.published_version, available: true })
  })

  // Stop: available false (WORKFLOW_UNAVAILABLE); STATE-013: its non-terminal Runs end CANCELED.
  app.post('/workflows/:workflow_id/stop', async (c) => {
    await body(c, isEmpty)
    const w = workflowOr404(c)
    const deps = c.var.deps
    const canceled = deps.db.tx(() => {
      stopWorkflow(deps.db, w.id)
      const runs = openRunsOfWorkflow(deps.db, w.id)
      for (const run of runs)
        finishExecution(deps, run, 'CANCELED', 'WORKFLOW_UNAVAILABLE', 'The workflow was stopped.')
      return runs.map((r) => r.id)
    })
    return c.json({ id: w.id, available: false, canceled })
  })

  // Organization data (Run request rules 4-5): fields given replace the current ones; a workflow that used
  // none starts from an empty grant, nothing used and the store reachable. Accepted Runs are not affected.
  app.post('/workflows/:workflow_id/organization-data', async (c) => {
    const patch = await body(c, organizationDataBody)
    const w = workflowOr404(c)
    const next: OrganizationData = {
      ...(w.organization_data ?? { grant: [], uses: [], source_reachable: true }),
      ...patch,
    }
    c.var.deps.db.tx(() => setOrganizationData(c.var.deps.db, w.id, next))
    return c.json({ id: w.id, organization_data: next })
  })

  // STATE-012: the Run's next (or pending) cancel cannot confirm an external effect and ends FAILED with
  // EXTERNAL_EFFECT_UNKNOWN instead of CANCELED.
  app.post('/runs/:run_id/external-effect-unknown', async (c) => {
    await body(c, isEmpty)
    const id = c.req.param('run_id')
    const { db } = c.var.deps
    const run = getExecution(db, id)
    if (!run || run.kind !== 'RUN')
      throw new ApiError('NOT_FOUND', { message: `no Run with id "${id}"` })
    if (run.terminal) {
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message: `Run "${id}" is already ${run.status}`,
        details: { status: run.status },
      })
    }
    run.cancel_outcome = 'EXTERNAL_EFFECT_UNKNOWN'
    saveExecution(db, run)
    return c.json({ run_id: id, cancel_outcome: 'EXTERNAL_EFFECT_UNKNOWN' })
  })
  return app
}
