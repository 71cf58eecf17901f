/**
 * Workflows (Endpoints > Workflows and Runs): the workflow description and Run creation. A Run request is
 * checked in the order availability, published version, approval need (beta), input JSON limits, input_schema,
 * limits, file_ids, concurrency and SU; then the Run is accepted QUEUED with its contract frozen (rule 3).
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { Context, Hono } from 'hono'
import type { Env } from '../deps.js'
import { JSON_LIMITS_TEXT, jsonLimitProblem } from '../domain/json-limits.js'
import { DEFAULT_RUN_RETENTION_DAYS } from '../domain/retention.js'
import { ApiError, apiErrorOf } from '../errors.js'
import { checkConcurrency, nextScenario, reserveSu } from '../execution/accept.js'
import { acceptExecution } from '../execution/lifecycle.js'
import { route } from '../http/route.js'
import { countAdmitted, insertSession } from '../store/executions.js'
import { interactiveActionsEnabled } from '../store/actions.js'
import { bindFileToExecution, getUsableInputFile } from '../store/files.js'
import { getWorkflow, type Workflow, type WorkflowLimits } from '../store/workflows.js'
import { workflowInputAjv } from '../util/ajv.js'
import { memoize } from '../util/memo.js'

type RunCreateBody = {
  published_version: number
  input?: Record<string, unknown>
  file_ids?: string[]
  limits?: Partial<WorkflowLimits>
  metadata?: Record<string, string>
}

/** The document's Run limits caps (Run request rule 2), the defaults where a workflow gives none. */
const DOCUMENT_RUN_LIMITS: WorkflowLimits = {
  run_seconds: 43_200,
  execution_seconds: 3600,
  queue_seconds: 600,
  max_su: 100,
  retention_days: DEFAULT_RUN_RETENTION_DAYS,
}

/** A Workflow of the key's Project, or 404 NOT_FOUND exactly as for an absent one (AUTH-009). */
export function visibleWorkflow(c: Context<Env>, id: string): Workflow {
  const workflow = getWorkflow(c.var.deps.db, id)
  if (!workflow || workflow.project_id !== c.var.auth!.projectId)
    throw new ApiError('NOT_FOUND', { message: 'No such workflow.' })
  return workflow
}

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

/** The compiled input_schema of a published version, by schema text. */
const inputValidatorOfText = memoize((text): ValidateFunction =>
  workflowInputAjv.compile(JSON.parse(text) as object),
)
const inputValidator = (w: Workflow): ValidateFunction =>
  inputValidatorOfText(JSON.stringify(w.input_schema))

const schemaProblems = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).slice(0, 20).map((e) => ({
    path: e.instancePath || '/',
    message:
      e.keyword === 'additionalProperties'
        ? `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`
        : (e.message ?? 'invalid'),
  }))

/** The Run's limits: the request's values over the workflow's (then the document's) defaults. */
function runLimits(w: Workflow, requested: Partial<WorkflowLimits> = {}): WorkflowLimits {
  const defaults = { ...DOCUMENT_RUN_LIMITS, ...w.limits }
  // Assumed: a workflow's own limits are also caps; a request above them is refused like one above the
  // document's caps (LIMIT_OUT_OF_RANGE), never lowered silently.
  const over = (Object.keys(requested) as (keyof WorkflowLimits)[]).filter(
    (k) => requested[k] !== undefined && requested[k] > defaults[k],
  )
  if (over.length > 0) {
    throw new ApiError('LIMIT_OUT_OF_RANGE', {
      message: `limits above this workflow's caps: ${over.join(', ')}.`,
      details: {
        errors: over.map((k) => ({ path: `/limits/${k}`, message: `must be <= ${defaults[k]}` })),
      },
    })
  }
  return { ...defaults, ...requested }
}

export function workflowRoutes(app: Hono<Env>): void {
  route(app, 'getWorkflow', (c) => ({
    status: 200,
    body: workflowBody(visibleWorkflow(c, c.req.param('workflow_id')!)),
  }))

  route(app, 'createRun', (c) => {
    const deps = c.var.deps
    const auth = c.var.auth!
    const workflow = visibleWorkflow(c, c.req.param('workflow_id')!)
    const body = c.var.input!.body as RunCreateBody
    // RUN-034: a stopped, unpublished or not API-startable workflow.
    if (!workflow.available) {
      throw new ApiError('WORKFLOW_UNAVAILABLE', {
        message: 'The workflow is stopped, unpublished or not startable by API.',
        details: { workflow_id: workflow.id, reason: 'NOT_AVAILABLE' },
      })
    }
    // STATE-026 (state rule 3). Assumed code: the document names none; the requested version is no longer
    // the published one, so it is answered as an unpublished workflow (409 WORKFLOW_UNAVAILABLE).
    if (body.published_version !== workflow.published_version) {
      throw new ApiError('WORKFLOW_UNAVAILABLE', {
        message: `published_version ${body.published_version} is not the current published version (${workflow.published_version}).`,
        details: {
          workflow_id: workflow.id,
          reason: 'PUBLISHED_VERSION_MISMATCH',
          published_version: workflow.published_version,
        },
      })
    }
    // SVC-009: the beta refuses at acceptance a workflow known to need a human approval. Assumed code:
    // the document says only 422; INVALID_INPUT with details.reason ACTION_REQUIRED. With the interactive
    // facility switched on for the Project, such a workflow is accepted and pauses REQUIRES_ACTION instead.
    if (workflow.needs_approval && !interactiveActionsEnabled(deps.db, auth.projectId)) {
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message:
          'This workflow needs a human approval; interactive actions are not provided in the private beta.',
        details: { workflow_id: workflow.id, reason: 'ACTION_REQUIRED' },
      })
    }
    const input = body.input ?? {}
    // RUN-026, RUN-027: JSON limits before the schema (a deep value is never walked by the validator).
    const limitProblem = jsonLimitProblem(input)
    if (limitProblem) {
      throw new ApiError('OUTPUT_LIMIT_EXCEEDED', {
        message: `Run input is over the JSON limits (${JSON_LIMITS_TEXT}).`,
        details: { ...limitProblem },
      })
    }
    // RUN-024: input must satisfy the workflow's input_schema.
    const validate = inputValidator(workflow)
    if (!validate(input)) {
      throw new ApiError('OUTPUT_SCHEMA_MISMATCH', {
        message: 'Run input does not match the workflow input_schema.',
        details: { errors: schemaProblems(validate.errors) },
      })
    }
    const limits = runLimits(workflow, body.limits)
    const nowMs = deps.clock.nowMs()
    const runId = deps.ids.uuid()
    const fileIds = body.file_ids ?? []
    // FILE-009: every file must be a usable input file of this Project; it becomes bound to this Run.
    for (const fileId of fileIds) {
      const usable = getUsableInputFile(deps.db, fileId, {
        projectId: auth.projectId,
        nowMs,
        executionId: runId,
      })
      if (!usable.ok) {
        const opts = {
          message: `file_ids: ${fileId} cannot be used (${usable.reason}).`,
          details: { file_id: fileId, reason: usable.reason },
        }
        throw apiErrorOf(usable.code, opts)
      }
    }
    checkConcurrency(deps, auth.projectId, countAdmitted(deps.db, auth.projectId))
    reserveSu(deps, auth.projectId, limits.max_su)
    const scenario = nextScenario(deps, workflow.id, workflow.outputs)
    const run = acceptExecution(deps, {
      id: runId,
      kind: 'RUN',
      project_id: auth.projectId,
      api_key: auth.key,
      deployment_id: null,
      session_id: null,
      workflow_id: workflow.id,
      published_version: workflow.published_version,
      scenario: scenario.name,
      steps: scenario.steps,
      input,
      metadata: body.metadata ?? {},
      execution_seconds: limits.execution_seconds,
      queue_seconds: limits.queue_seconds,
      max_su: limits.max_su,
      // RUN-033 (Run request rule 3): steps and contracts frozen at acceptance.
      run: {
        deadline_at: nowMs + limits.run_seconds * 1000,
        run_seconds: limits.run_seconds,
        retention_days: limits.retention_days,
        progress_total: workflow.steps,
        allows_partial: workflow.allows_partial,
        outputs: workflow.outputs,
        file_ids: fileIds,
      },
    })
    for (const fileId of fileIds) bindFileToExecution(deps.db, fileId, run.id, nowMs)
    // Run request rule 6: the workflow's steps hold an internal Session (deployment_id is the workflow's id);
    // Session paths refuse it with 409 WORKFLOW_MANAGED_SESSION. GET /_mock/runs/{id}/sessions lists it.
    insertSession(deps.db, {
      id: deps.ids.uuid(),
      project_id: auth.projectId,
      deployment_id: workflow.id,
      status: 'ACTIVE',
      deleted_at: null,
      metadata: {},
      created_at: nowMs,
      last_activity_at: nowMs,
      workflow_run_id: run.id,
    })
    // STATE-014: the whole-Run deadline is a timer; it is never extended (STATE-015).
    deps.scheduler.schedule(
      'run.deadline',
      run.run!.deadline_at,
      { id: run.id },
      { subject: run.id },
    )
    return {
      status: 202,
      execution: run.id,
      body: {
        run_id: run.id,
        status_url: `/v1/runs/${run.id}`,
        events_url: `/v1/runs/${run.id}/events`,
        idempotency_expires_at: c.var.input!.idempotencyExpiresAt,
      },
    }
  })
}
