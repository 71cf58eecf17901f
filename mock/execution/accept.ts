/**
 * Acceptance of a new execution (Sessions and Turns, Workflows and Runs; Limits > Concurrency, SU budgets):
 * acceptSession, acceptInput and acceptRun decide whether a create request is accepted and store it. Every
 * acceptance checks concurrency and reserves its max_su (balance, then the Project's UTC day and month
 * budgets), and takes the scenario the execution will follow.
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import type { components } from '../../spec/index.js'
import type { AuthInfo, Deps } from '../deps.js'
import { JSON_LIMITS_TEXT, jsonLimitProblem } from '../domain/json-limits.js'
import { beyondGrant } from '../domain/organization-data.js'
import { DEFAULT_RUN_RETENTION_DAYS, runFileExpiresAt } from '../domain/retention.js'
import { ApiError, apiErrorOf } from '../errors.js'
import type { InputFileProblem } from '../domain/files.js'
import { interactiveActionsEnabled } from '../store/actions.js'
import type { Deployment, OutputContract } from '../store/deployments.js'
import {
  insertSession,
  latestTurnOfSession,
  openReservations,
  projectLoad,
  updateSession,
  type ProjectLoad,
  type RunRecord,
  type SessionRecord,
  type TurnRecord,
} from '../store/executions.js'
import { bindFileToExecution, getUsableInputFile } from '../store/files.js'
import type { Workflow, WorkflowLimits } from '../store/workflows.js'
import { workflowInputAjv } from '../util/ajv.js'
import { deepFreeze } from '../util/freeze.js'
import { memoize, memoizeFrozen } from '../util/memo.js'
import { viewProject } from '../store/projects.js'
import { getFixtureScenario, takeScenario } from '../store/scenarios.js'
import { checkProjectBudget } from './ledger.js'
import { acceptExecution, PROJECT_CONCURRENCY } from './lifecycle.js'
import {
  builtinScenario,
  DEFAULT_SCENARIO,
  marksRunSteps,
  uniqueStepIds,
  type ScenarioStep,
} from './scenarios.js'

/** The error of an input file that cannot be used (FILE-009, SES-006, RET-006, DEP-005). */
function inputFileError(problem: InputFileProblem, fileId: string, what: string): ApiError {
  const opts = {
    message: `${what} cannot be used (${problem.reason}).`,
    details: { file_id: fileId, reason: problem.reason },
  }
  return problem.code === 'INVALID_INPUT'
    ? new ApiError('INVALID_INPUT', { status: 422, ...opts })
    : apiErrorOf(problem.code, opts)
}

/** ExecutionLimits defaults of a Turn (Turn input and request options). */
const TURN_LIMIT_DEFAULTS = { execution_seconds: 3600, max_su: 100, queue_seconds: 600 }

type Schemas = components['schemas']

/** The body of a Session creation or of added input (SessionCreateInput, validated before). */
export type TurnRequest = Schemas['SessionCreateInput']

/** The body of a Run creation (RunCreateInput, validated against the OpenAPI schema before). */
export type RunRequest = Schemas['RunCreateInput']

/** The document's Run limits caps (Run request rule 2), the defaults where a workflow gives none. */
const DOCUMENT_RUN_LIMITS: WorkflowLimits = {
  run_seconds: 43_200,
  execution_seconds: 3600,
  queue_seconds: 600,
  max_su: 100,
  retention_days: DEFAULT_RUN_RETENTION_DAYS,
}

/**
 * Accepted executions beyond the 2 running ones wait; when the Project's `max_waiting_executions` (fixture
 * field, default 10) already wait, an acceptance is refused with 429 CONCURRENCY_LIMIT. Assumed: the document
 * does not say where "beyond the limit" starts. `load`: the Project's open executions (projectLoad).
 */
export function checkConcurrency(deps: Deps, projectId: string, load: ProjectLoad): void {
  const running = load.open - load.waiting
  const cap = viewProject(deps.db, projectId)!.max_waiting_executions
  if (running >= PROJECT_CONCURRENCY && load.waiting >= cap) {
    throw new ApiError('CONCURRENCY_LIMIT', {
      message: `The Project runs ${PROJECT_CONCURRENCY} executions at a time and ${cap} wait already.`,
      retryAfterS: 5,
      details: { running, waiting: cap },
    })
  }
}

/**
 * Reserves an execution's max_su at acceptance: 402 INSUFFICIENT_SU when the balance minus open reservations
 * cannot cover it, else 402 PROJECT_BUDGET_EXCEEDED when it would take the Project's UTC day or month past its
 * budget (BUD-003..005). The non-retryable balance problem is reported first: waiting would not fix it.
 */
export function reserveSu(deps: Deps, projectId: string, maxSu: number, load: ProjectLoad): void {
  const project = viewProject(deps.db, projectId)!
  // Most acceptances leave plenty: when the balance covers maxSu beside an upper bound of every open
  // reservation (with a margin far above any rounding of the sum), it covers it beside the sum itself.
  const margin = 1e-6 * (1 + Math.abs(project.su_balance))
  if (project.su_balance - load.maxSuBound < maxSu + margin) {
    const available = project.su_balance - openReservations(deps.db, projectId)
    if (available < maxSu) {
      throw new ApiError('INSUFFICIENT_SU', {
        message:
          'Not enough available SU for this execution’s budget (max_su is reserved at acceptance).',
        details: { available_su: Math.max(0, available), required_su: maxSu },
      })
    }
  }
  checkProjectBudget(deps, projectId, maxSu, load)
}

/** The scenario of the next execution of a target: the queued one, else the default; steps bound to the contract. */
export function nextScenario(
  deps: Deps,
  targetId: string,
  contract: readonly OutputContract[],
): { name: string; steps: readonly ScenarioStep[] } {
  const name = takeScenario(deps.db, targetId) ?? DEFAULT_SCENARIO
  const keys = contractKeysOf(contract)
  // A built-in scenario's bound steps depend only on its name and the contract's two keys: made once,
  // frozen, and shared by every execution that follows it (their JSON is then made once too; see
  // insertExecution). A fixture scenario's are made each time (the world can change it).
  if (builtinScenario(name))
    return { name, steps: boundBuiltinSteps(JSON.stringify([name, keys.required, keys.optional])) }
  const definition = getFixtureScenario(deps.db, name)
  if (!definition) throw new Error(`queued scenario ${name} does not exist`)
  return { name, steps: bindSteps(definition.steps, keys) }
}

/** The key a contract-bound output step takes: the contract's first required (or optional) output's, else "result". */
type ContractKeys = { required: string; optional: string }

function contractKeys(contract: readonly OutputContract[]): ContractKeys {
  const keyOf = (required: boolean) =>
    contract.find((o) => o.required === required)?.key ?? 'result'
  return { required: keyOf(true), optional: keyOf(false) }
}

/** contractKeys, made once per contract while a kept (frozen) Deployment record holds it. */
const contractKeysOf = memoizeFrozen((contract: readonly OutputContract[]) =>
  Object.freeze(contractKeys(contract)),
)

/** A built-in scenario's steps bound to contract keys, frozen all the way down; the key is [name, required, optional] in JSON. */
const boundBuiltinSteps = memoize((key: string): readonly ScenarioStep[] => {
  const [name, required, optional] = JSON.parse(key) as [string, string, string]
  return deepFreeze(bindSteps(builtinScenario(name)!.steps, { required, optional }))
})

/** Output steps without a key get the contract's key (or "result"); the other steps are kept as they are. */
function bindSteps(steps: readonly ScenarioStep[], keys: ContractKeys): ScenarioStep[] {
  // Object.assign, not { ...output, key }: Node 20 builds an object literal that begins with a spread on a
  // slow path (see acceptExecution).
  return steps.map((s): ScenarioStep =>
    s.step === 'output' && s.output.key === undefined
      ? {
          ...s,
          output: Object.assign({}, s.output, {
            key: s.output.contract ? keys[s.output.contract] : 'result',
          }),
        }
      : s,
  )
}

/** Creates a Session of an ACTIVE Deployment together with its first Turn (Sessions and Turns). */
export function acceptSession(
  deps: Deps,
  auth: AuthInfo,
  deployment: Deployment,
  body: TurnRequest,
): TurnRecord {
  // The Session is inserted inside the request's transaction: acceptTurn's refusals roll it back.
  const nowMs = deps.clock.nowMs()
  const session: SessionRecord = {
    id: deps.ids.uuid(),
    seq: 0, // set by insertSession
    project_id: deployment.project_id,
    deployment_id: deployment.id,
    status: 'ACTIVE',
    deleted_at: null,
    metadata: body.metadata ?? {},
    created_at: nowMs,
    last_activity_at: nowMs,
    workflow_run_id: null,
  }
  insertSession(deps.db, session)
  return acceptTurn(deps, auth, deployment, session, body)
}

/**
 * Accepts input to an existing Session as a new Turn: 409 SESSION_CLOSED for a closed Session, 409
 * SESSION_BUSY while a Turn runs (state rules 1 and 2), 503 SESSION_UPDATING while its Turn's cancel is
 * being confirmed (assumed, sessionUpdating).
 */
export function acceptInput(
  deps: Deps,
  auth: AuthInfo,
  deployment: Deployment,
  session: Readonly<SessionRecord>,
  body: TurnRequest,
): TurnRecord {
  if (session.status === 'CLOSED') throw new ApiError('SESSION_CLOSED')
  const current = latestTurnOfSession(deps.db, session.id)
  sessionUpdating(current)
  if (current && !current.terminal)
    throw new ApiError('SESSION_BUSY', { details: { turn_id: current.id } })
  return acceptTurn(deps, auth, deployment, session, body)
}

/**
 * ERR-068 (assumed trigger; the document gives none): a Session whose Turn is CANCEL_REQUESTED is being
 * updated until the cancel is confirmed (one virtual second): input and close answer 503 SESSION_UPDATING,
 * retryable, Retry-After 1; the same request resent with the same key is then accepted.
 */
export function sessionUpdating(current: { id: string; status: string } | undefined): void {
  if (current?.status !== 'CANCEL_REQUESTED') return
  throw new ApiError('SESSION_UPDATING', {
    message: 'The Session is being updated (its Turn is being canceled); resend with the same key.',
    details: { turn_id: current.id },
    retryAfterS: 1,
  })
}

/**
 * Accepts a new Turn in a Session (creation or added input): an ACTIVE Deployment (409
 * DEPLOYMENT_UNAVAILABLE), input files, limits defaults, budget, concurrency, scenario.
 */
function acceptTurn(
  deps: Deps,
  auth: AuthInfo,
  deployment: Deployment,
  session: Readonly<SessionRecord>,
  body: TurnRequest,
): TurnRecord {
  if (deployment.status !== 'ACTIVE')
    throw new ApiError('DEPLOYMENT_UNAVAILABLE', { message: 'The Deployment is RETIRED.' })
  const files = body.input
    .filter((i): i is Schemas['FileInput'] => i.type === 'FILE')
    .map((i) => i.file_id)
  if (files.length > 20 || new Set(files).size !== files.length) {
    throw new ApiError('TOO_MANY_FILES', { message: 'At most 20 input files, none listed twice.' })
  }
  // The body's limits over the defaults (Object.assign: see nextScenario; the schema admits no other field).
  const limits = Object.assign({}, TURN_LIMIT_DEFAULTS, body.limits)
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
    if (!usable.ok) throw inputFileError(usable, fileId, `Input file ${fileId}`)
  }
  const load = projectLoad(deps.db, auth.projectId)
  checkConcurrency(deps, auth.projectId, load)
  reserveSu(deps, auth.projectId, limits.max_su, load)
  const scenario = nextScenario(deps, deployment.id, deployment.outputs)
  // A Session created by this request was stored with this instant already.
  if (session.last_activity_at !== nowMs)
    updateSession(deps.db, session.id, { last_activity_at: nowMs })
  // RET-007: a file given as Turn input is kept 30 days from now and belongs to this Session.
  for (const fileId of files)
    bindFileToExecution(deps.db, fileId, turnId, nowMs, { sessionId: session.id })
  return acceptExecution(
    deps,
    {
      id: turnId,
      kind: 'TURN',
      project_id: auth.projectId,
      api_key: auth.key,
      deployment_id: deployment.id,
      session_id: session.id,
      session_seq: session.seq,
      workflow_id: null,
      published_version: null,
      scenario: scenario.name,
      steps: scenario.steps,
      input: body.input,
      metadata: body.metadata ?? {},
      execution_seconds: limits.execution_seconds,
      queue_seconds: limits.queue_seconds,
      max_su: limits.max_su,
    },
    load.open - load.waiting,
  )
}

/** The compiled input_schema of a published version, by schema text. */
const inputValidatorOfText = memoize((text): ValidateFunction =>
  workflowInputAjv().compile(JSON.parse(text) as object),
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
  const defaults = Object.assign({}, DOCUMENT_RUN_LIMITS, w.limits)
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
  return Object.assign({}, defaults, requested)
}

/** RUN-036: 403 WORKFLOW_DATA_DENIED when the workflow uses organization data beyond its publication grant. */
function dataWithinGrant(workflow: Workflow): void {
  const od = workflow.organization_data
  const beyond = od ? beyondGrant(od) : []
  if (beyond.length === 0) return
  throw new ApiError('WORKFLOW_DATA_DENIED', {
    message: `The workflow reads or writes organization data beyond the scope declared at publication: ${beyond.join(', ')}.`,
    details: { workflow_id: workflow.id, published_version: workflow.published_version, beyond },
  })
}

/**
 * RUN-035: 503 SOURCE_UNAVAILABLE (retryable) when the organization data store that checks Run input is
 * unreachable. Assumed: Retry-After 5 s; only a workflow that uses organization data consults the store.
 */
function sourceReachable(workflow: Workflow): void {
  if (!workflow.organization_data || workflow.organization_data.source_reachable) return
  throw new ApiError('SOURCE_UNAVAILABLE', {
    message:
      'The organization data store that checks Run input is unreachable; no Run was created. Resend with the same Idempotency-Key.',
    details: { workflow_id: workflow.id },
    retryAfterS: SOURCE_RETRY_AFTER_S,
  })
}

/** Assumed Retry-After of SOURCE_UNAVAILABLE (the document gives no value). */
const SOURCE_RETRY_AFTER_S = 5

/**
 * Accepts a Run (Workflows and Runs, Run request rules 1-6): the workflow is available at the requested
 * published version, input within the JSON limits and the input_schema, limits within the caps, files
 * usable, a slot or a waiting place, the SU reserved; then the Run, its internal Session and its deadline.
 */
export function acceptRun(
  deps: Deps,
  auth: AuthInfo,
  workflow: Workflow,
  body: RunRequest,
): RunRecord {
  // RUN-034: a stopped, unpublished or not API-startable workflow.
  if (!workflow.available) {
    throw new ApiError('WORKFLOW_UNAVAILABLE', {
      message: 'The workflow is stopped, unpublished or not startable by API.',
      details: { workflow_id: workflow.id, reason: 'NOT_AVAILABLE' },
    })
  }
  // STATE-026 (state rule 3). Assumed code: the document names none. The client holds a stale description:
  // its next step is to read the workflow again (not to wait, as WORKFLOW_UNAVAILABLE says), so 422
  // INVALID_INPUT with details.reason PUBLISHED_VERSION_MISMATCH and the current published_version.
  if (body.published_version !== workflow.published_version) {
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `published_version ${body.published_version} is not the current published version (${workflow.published_version}); read the workflow again.`,
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
  // RUN-036 (Run request rule 5): steps that read or write organization data beyond the publication grant.
  dataWithinGrant(workflow)
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
  // RUN-035 (Run request rule 4): the organization data store checks the input; unreachable: no Run.
  sourceReachable(workflow)
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
    if (!usable.ok) throw inputFileError(usable, fileId, `file_ids: ${fileId}`)
  }
  const load = projectLoad(deps.db, auth.projectId)
  checkConcurrency(deps, auth.projectId, load)
  reserveSu(deps, auth.projectId, limits.max_su, load)
  const scenario = nextScenario(deps, workflow.id, workflow.outputs)
  const run = acceptExecution(
    deps,
    {
      id: runId,
      kind: 'RUN',
      project_id: auth.projectId,
      api_key: auth.key,
      deployment_id: null,
      session_id: null,
      session_seq: null,
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
        // A script that marks its steps stands for the published step definitions: its unique steps.
        progress_total: marksRunSteps(scenario.steps)
          ? uniqueStepIds(scenario.steps).length
          : workflow.steps,
        allows_partial: workflow.allows_partial,
        outputs: workflow.outputs,
        file_ids: fileIds,
      },
    },
    load.open - load.waiting,
  )
  // RET-009: a Run's input files live until its deadline and the end of its content retention.
  const runFilesUntilMs = runFileExpiresAt(run.run!.deadline_at, run.run!.retention_days)
  for (const fileId of fileIds)
    bindFileToExecution(deps.db, fileId, run.id, nowMs, { runFilesUntilMs })
  // Run request rule 6: the workflow's steps hold an internal Session (deployment_id is the workflow's id);
  // Session paths refuse it with 409 WORKFLOW_MANAGED_SESSION. GET /_mock/runs/{id}/sessions lists it.
  insertSession(deps.db, {
    id: deps.ids.uuid(),
    seq: 0, // set by insertSession
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
  deps.scheduler.schedule('run.deadline', run.run.deadline_at, { id: run.id }, { subject: run.id })
  return run
}
