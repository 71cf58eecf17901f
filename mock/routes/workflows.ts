/**
 * Workflows (Endpoints > Workflows and Runs): the workflow description and Run creation. A Run request is
 * checked in the order availability, published version, approval need (beta), input JSON limits, input_schema,
 * limits, file_ids, concurrency and SU; then the Run is accepted QUEUED with its contract frozen (rule 3).
 */
import type { Hono } from 'hono'
import { visibleWorkflow } from '../access/access.js'
import type { Env } from '../deps.js'
import { acceptRun } from '../execution/accept.js'
import { route } from '../http/route.js'
import { runReceiptBody } from '../http/receipt-bodies.js'
import type { Schema } from '../http/typed.js'
import type { Workflow } from '../store/workflows.js'

/**
 * WF-001, WF-002: the workflow description; error.code inside the 200 body when it is not available. id and
 * name are not among the documented Workflow fields (the schema allows more; the mock always showed them).
 */
function workflowBody(w: Workflow): Schema<'Workflow'> & { id: string; name: string } {
  return {
    id: w.id,
    name: w.name,
    published_version: w.published_version,
    input_schema: w.input_schema,
    outputs: w.outputs,
    available: w.available,
    limits: w.limits,
    error: w.available
      ? null
      : {
          code: w.error_code ?? 'WORKFLOW_UNAVAILABLE',
          message: 'The workflow is stopped, unpublished or not startable by API.',
          retryable: false,
          details: {},
        },
  }
}

export function workflowRoutes(app: Hono<Env>): void {
  route(app, 'getWorkflow', (c, req) => ({
    status: 200,
    body: workflowBody(visibleWorkflow(c.var.deps, req.auth, req.params.workflow_id)),
  }))

  route(app, 'createRun', (c, req) => {
    const deps = c.var.deps
    const workflow = visibleWorkflow(deps, req.auth, req.params.workflow_id)
    const run = acceptRun(deps, req.auth, workflow, req.body)
    return {
      status: 202,
      execution: run.id,
      body: runReceiptBody(run.id, req.idempotencyExpiresAt),
    }
  })
}
