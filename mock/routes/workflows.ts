/**
 * Workflows (Endpoints > Workflows and Runs): the workflow description and Run creation. A Run request is
 * checked in the order availability, published version, approval need (beta), input JSON limits, input_schema,
 * limits, file_ids, concurrency and SU; then the Run is accepted QUEUED with its contract frozen (rule 3).
 */
import type { Hono } from 'hono'
import { visibleWorkflow } from '../access/access.js'
import type { Env } from '../deps.js'
import { acceptRun, type RunRequest } from '../execution/accept.js'
import { route } from '../http/route.js'
import type { Workflow } from '../store/workflows.js'

/** WF-001, WF-002: the workflow description; error.code inside the 200 body when it is not available. */
function workflowBody(w: Workflow) {
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
  route(app, 'getWorkflow', (c) => ({
    status: 200,
    body: workflowBody(visibleWorkflow(c.var.deps, c.var.auth!, c.req.param('workflow_id')!)),
  }))

  route(app, 'createRun', (c) => {
    const { deps, auth, input } = c.var
    const workflow = visibleWorkflow(deps, auth!, c.req.param('workflow_id')!)
    const run = acceptRun(deps, auth!, workflow, input!.body as RunRequest)
    return {
      status: 202,
      execution: run.id,
      body: {
        run_id: run.id,
        status_url: `/v1/runs/${run.id}`,
        events_url: `/v1/runs/${run.id}/events`,
        idempotency_expires_at: input!.idempotencyExpiresAt,
      },
    }
  })
}
