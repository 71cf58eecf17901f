/**
 * The mock-only control API under /_mock (MOCK-CONTRACT "Control API"): fixtures, clock, clock advance,
 * reset and scenario queueing, plus extensions: GET /_mock/scenarios (scenarios and the queue), POST
 * /_mock/projects/{project_id}/balance and /storage-limit, POST /_mock/artifacts, DELETE /_mock/artifacts/{id},
 * GET and POST /_mock/projects/{project_id}/budget (SU budget windows), POST
 * /_mock/preparations/{preparation_id}/package (the candidate setup changes: PACKAGE_CHANGED), and the
 * Workflow/Run extensions of control-runs.ts (publish, stop, external-effect-unknown).
 */
import { readFileSync } from 'node:fs'
import { Hono, type Context } from 'hono'
import { loadOpenApi, OPENAPI_FILE } from '../../spec/index.js'
import { body } from '../http/control-body.js'
import { CLOCK_MODES, type ClockMode } from '../clock/clock.js'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import {
  BUILTIN_SCENARIOS,
  builtinScenario,
  marksRunSteps,
  SCENARIO_NAME_PATTERN,
  validateScenario,
  type ScenarioDefinition,
  type ScenarioStep,
  type ScenarioTarget,
} from '../execution/scenarios.js'
import { fixturesView, resetWorld } from '../fixtures/load.js'
import { getDeployment } from '../store/deployments.js'
import { createArtifact, deleteArtifact } from '../store/files.js'
import { getProject, setProjectBalance, setProjectStorageLimit } from '../store/projects.js'
import {
  enqueueScenario,
  getFixtureScenario,
  insertFixtureScenario,
  listFixtureScenarios,
  listScenarioQueue,
  nextFixtureScenarioPosition,
} from '../store/scenarios.js'
import { getWorkflow } from '../store/workflows.js'
import { artifactDetail } from '../domain/file-views.js'
import { findSession } from '../access/access.js'
import { budgetView, rehearseSpend } from '../execution/ledger.js'
import { setApiKeyScopes } from '../store/key-scopes.js'
import { withdrawnExecutions } from '../execution/withdrawal.js'
import { acceptScopes } from '../http/operations.js'
import { setProjectBudgets } from '../store/usage.js'
import { changeCandidatePackage } from '../works/preparations.js'
import { controlBodyAjv as ajv } from '../util/ajv.js'
import { lazy } from '../util/memo.js'
import { versions } from '../middleware/version.js'
import { iso } from '../util/iso.js'

const clockBody = ajv.compile<{ mode: ClockMode }>({
  type: 'object',
  additionalProperties: false,
  required: ['mode'],
  properties: { mode: { enum: [...CLOCK_MODES] } },
})
/** At most ten years per call: far beyond every retention period, small enough to stay a finite number. */
const MAX_ADVANCE_S = 10 * 366 * 24 * 3600
const advanceBody = ajv.compile<{ seconds: number }>({
  type: 'object',
  additionalProperties: false,
  required: ['seconds'],
  properties: { seconds: { type: 'number', exclusiveMinimum: 0, maximum: MAX_ADVANCE_S } },
})
const resetBody = ajv.compile<Record<string, never>>({
  type: 'object',
  additionalProperties: false,
})
/** An inline scenario: a fixture scenario's shape (fixtures/world.schema.json), with an optional name. */
type InlineScenario = {
  name?: string
  description?: string
  applies_to?: ScenarioTarget[]
  steps: ScenarioStep[]
}
const scenarioBody = ajv.compile<{
  target_id: string
  scenario: string | InlineScenario
  times?: number
}>({
  type: 'object',
  additionalProperties: false,
  required: ['target_id', 'scenario'],
  properties: {
    target_id: { type: 'string', minLength: 1 },
    scenario: {
      anyOf: [
        { type: 'string', minLength: 1 },
        {
          type: 'object',
          additionalProperties: false,
          required: ['steps'],
          properties: {
            name: { type: 'string', pattern: SCENARIO_NAME_PATTERN.source, maxLength: 100 },
            description: { type: 'string', maxLength: 1000 },
            applies_to: { type: 'array' },
            steps: { type: 'array', minItems: 1, maxItems: 1000 },
          },
        },
      ],
    },
    times: { type: 'integer', minimum: 1, maximum: 1000 },
  },
})

const balanceBody = ajv.compile<{ su_balance: number }>({
  type: 'object',
  additionalProperties: false,
  required: ['su_balance'],
  properties: { su_balance: { type: 'number', minimum: 0, maximum: 1e12 } },
})
const storageLimitBody = ajv.compile<{ storage_limit_bytes: number }>({
  type: 'object',
  additionalProperties: false,
  required: ['storage_limit_bytes'],
  properties: { storage_limit_bytes: { type: 'integer', minimum: 0, maximum: 2 ** 50 } },
})
/** At most 10 years of retention, like the clock advance bound. */
const artifactBody = ajv.compile<{
  project_id: string
  deployment_id?: string
  session_id?: string
  execution_id?: string
  filename: string
  mime_type: string
  content_base64: string
  retention_seconds?: number
}>({
  type: 'object',
  additionalProperties: false,
  required: ['project_id', 'filename', 'mime_type', 'content_base64'],
  properties: {
    project_id: { type: 'string', minLength: 1 },
    deployment_id: { type: 'string', minLength: 1 },
    session_id: { type: 'string', minLength: 1 },
    execution_id: { type: 'string', minLength: 1 },
    filename: { type: 'string', minLength: 1, maxLength: 1024 },
    mime_type: { type: 'string', minLength: 1, maxLength: 255 },
    content_base64: { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' },
    retention_seconds: { type: 'number', exclusiveMinimum: 0, maximum: MAX_ADVANCE_S },
  },
})

/** Budget rehearsal: set the Project's budgets and/or bring today's or this month's settled SU to a value. */
const budgetBody = ajv.compile<{
  daily_budget_su?: number
  monthly_budget_su?: number
  spent_today_su?: number
  spent_this_month_su?: number
}>({
  type: 'object',
  additionalProperties: false,
  properties: {
    daily_budget_su: { type: 'number', minimum: 0, maximum: 1e9 },
    monthly_budget_su: { type: 'number', minimum: 0, maximum: 1e9 },
    spent_today_su: { type: 'number', minimum: 0, maximum: 1e9 },
    spent_this_month_su: { type: 'number', minimum: 0, maximum: 1e9 },
  },
})

/** The scopes Authentication 3 names. */
const SCOPES = [
  'events:read',
  'runs:read',
  'runs:cancel',
  'runs:delete',
  'workflows:read',
  'workflows:run',
  'files:write',
  'artifacts:read',
  'actions:resolve',
  'actions:approve',
  'usage:read',
  'works:read',
  'works:write',
  'works:approve',
]
const scopesBody = ajv.compile<{ scopes: string[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['scopes'],
  properties: { scopes: { type: 'array', uniqueItems: true, items: { enum: SCOPES } } },
})

/** GET /_mock/requests filters (query parameters; every one given must match). */
const journalQuery = ajv.compile<{
  method?: string
  path?: string
  path_prefix?: string
  operation?: string
  status?: string
  idempotency_key?: string
  request_id?: string
  limit?: string
}>({
  type: 'object',
  additionalProperties: false,
  properties: {
    method: { type: 'string', pattern: '^[A-Za-z]{1,16}$' },
    path: { type: 'string', minLength: 1 },
    path_prefix: { type: 'string', minLength: 1 },
    operation: { type: 'string', minLength: 1 },
    status: { type: 'string', pattern: '^[1-5][0-9]{2}$' },
    idempotency_key: { type: 'string', minLength: 1 },
    request_id: { type: 'string', minLength: 1 },
    limit: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' },
  },
})

/** The OpenAPI document as shipped (YAML text), read once. */
const openApiText = lazy(() => readFileSync(OPENAPI_FILE, 'utf8'))

/**
 * Stores an inline scenario (POST /_mock/scenarios with a script instead of a name) beside the fixture
 * scenarios, validated as they are; its name is the given one or inline-<n>. A reset removes it.
 */
function storeInlineScenario(c: Context<Env>, inline: InlineScenario): string {
  const { db } = c.var.deps
  const position = nextFixtureScenarioPosition(db)
  const name = inline.name ?? `inline-${position + 1}`
  if (builtinScenario(name) || getFixtureScenario(db, name)) {
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `a scenario named "${name}" exists already; choose another name`,
      details: { scenario: name },
    })
  }
  const def = {
    name,
    description: inline.description ?? '',
    // A script marking Run steps fits Runs only; any other fits both by default.
    applies_to:
      inline.applies_to ??
      ((marksRunSteps(inline.steps)
        ? ['workflow']
        : ['deployment', 'workflow']) as ScenarioTarget[]),
    steps: inline.steps,
  }
  const problems = validateScenario(def)
  if (problems.length > 0) {
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `invalid scenario: ${problems.join('; ')}`,
      details: { problems },
    })
  }
  insertFixtureScenario(db, name, def, position)
  return name
}

/** A scenario by name: built-in first, then the fixture world's. */
function findScenario(c: Context<Env>, name: string): ScenarioDefinition | undefined {
  return builtinScenario(name) ?? getFixtureScenario(c.var.deps.db, name)
}

/** The /_mock sub-app. */
export function controlRoutes(): Hono<Env> {
  const app = new Hono<Env>()

  app.get('/fixtures', (c) => c.json(fixturesView(c.var.deps.db)))

  // Discovery: a health path for start-up waits, the versions, and the OpenAPI document the mock serves.
  app.get('/health', (c) => c.json({ status: 'ok' }))
  app.get('/version', (c) => c.json(versions()))
  app.get('/openapi.yaml', (c) => {
    c.header('Content-Type', 'application/yaml; charset=utf-8')
    return c.body(openApiText())
  })
  app.get('/openapi.json', (c) => c.json(loadOpenApi()))

  // The request journal: what the mock received on /v1 and /api/runtime, oldest first (the last `limit`).
  app.get('/requests', (c) => {
    const q = c.req.query()
    if (!journalQuery(q)) {
      const problems = (journalQuery.errors ?? []).map((e) =>
        e.keyword === 'additionalProperties'
          ? `unknown filter "${(e.params as { additionalProperty: string }).additionalProperty}"`
          : `${e.instancePath.slice(1)} ${e.message ?? 'invalid'}`,
      )
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message: `invalid filters: ${problems.join('; ')}`,
        details: { problems },
      })
    }
    const { journal } = c.var.deps
    const items = journal
      .list()
      .filter(
        (e) =>
          (q.method === undefined || e.method === q.method.toUpperCase()) &&
          (q.path === undefined || e.path === q.path) &&
          (q.path_prefix === undefined || e.path.startsWith(q.path_prefix)) &&
          (q.operation === undefined || e.operation === q.operation) &&
          (q.status === undefined || e.status === Number(q.status)) &&
          (q.idempotency_key === undefined || e.idempotency_key === q.idempotency_key) &&
          (q.request_id === undefined || e.request_id === q.request_id),
      )
    return c.json({
      items: q.limit === undefined ? items : items.slice(-Number(q.limit)),
      capacity: journal.capacity,
      dropped: journal.dropped,
    })
  })

  app.delete('/requests', (c) => {
    c.var.deps.journal.clear()
    return c.json({ cleared: true })
  })

  app.get('/clock', (c) => {
    const { clock } = c.var.deps
    return c.json({ now: clock.iso(), mode: clock.mode })
  })

  app.post('/clock', async (c) => {
    const { mode } = await body(c, clockBody)
    const { clock } = c.var.deps
    clock.setMode(mode)
    return c.json({ now: clock.iso(), mode: clock.mode })
  })

  app.post('/clock/advance', async (c) => {
    const { seconds } = await body(c, advanceBody)
    // Answers once every timer due in the window has fired (webhook sends may still be in flight).
    const { now } = await c.var.deps.scheduler.advanceBy(Math.round(seconds * 1000))
    return c.json({ now: iso(now) })
  })

  app.post('/reset', async (c) => {
    await body(c, resetBody)
    const now = await resetWorld(c.var.deps)
    // The clock is back in the mode the mock was started in (--clock).
    return c.json({ now: iso(now), mode: c.var.deps.clock.mode })
  })

  app.get('/scenarios', (c) => {
    const { db } = c.var.deps
    return c.json({
      builtin: BUILTIN_SCENARIOS,
      fixture: listFixtureScenarios(db),
      queue: listScenarioQueue(db).map(({ target_id, scenario, remaining }) => ({
        target_id,
        scenario,
        remaining,
      })),
    })
  })

  app.post('/scenarios', async (c) => {
    const { target_id, scenario: given, times = 1 } = await body(c, scenarioBody)
    const { db } = c.var.deps
    const target: 'deployment' | 'workflow' | undefined = getDeployment(db, target_id)
      ? 'deployment'
      : getWorkflow(db, target_id)
        ? 'workflow'
        : undefined
    if (!target) {
      throw new ApiError('NOT_FOUND', {
        message: `no Deployment or Workflow with id "${target_id}"`,
        details: { target_id },
      })
    }
    // One transaction: an inline scenario refused below (it does not apply to the target) is not kept.
    const queued = db.tx(() => {
      const scenario = typeof given === 'string' ? given : storeInlineScenario(c, given)
      const def = findScenario(c, scenario)
      if (!def) {
        const known = [
          ...BUILTIN_SCENARIOS.map((s) => s.name),
          ...listFixtureScenarios(db).map((s) => s.name),
        ]
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: `unknown scenario "${scenario}"; known: ${known.join(', ')}`,
          details: { scenario, known },
        })
      }
      if (!def.applies_to.includes(target)) {
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: `scenario "${scenario}" applies to ${def.applies_to.join(' and ')} executions, not to a ${target}`,
          details: { scenario, target_id, applies_to: def.applies_to },
        })
      }
      return enqueueScenario(db, target_id, scenario, times)
    })
    return c.json({ target_id, target, scenario: queued.scenario, times: queued.remaining }, 201)
  })

  // Extension: set a Project's SU balance (rehearse 402 MINIMUM_SU_REQUIRED).
  app.post('/projects/:project_id/balance', async (c) => {
    const { su_balance } = await body(c, balanceBody)
    const projectId = c.req.param('project_id')
    if (!setProjectBalance(c.var.deps.db, projectId, su_balance)) {
      throw new ApiError('NOT_FOUND', { message: `no Project with id "${projectId}"` })
    }
    return c.json({ project_id: projectId, su_balance })
  })

  // Extension: set a Project's file storage limit (rehearse 413 PROJECT_STORAGE_LIMIT).
  app.post('/projects/:project_id/storage-limit', async (c) => {
    const { storage_limit_bytes } = await body(c, storageLimitBody)
    const projectId = c.req.param('project_id')
    if (!setProjectStorageLimit(c.var.deps.db, projectId, storage_limit_bytes)) {
      throw new ApiError('NOT_FOUND', { message: `no Project with id "${projectId}"` })
    }
    return c.json({ project_id: projectId, storage_limit_bytes })
  })

  // Extension: store a result file as if an execution had produced it (artifact reads and downloads).
  app.post('/artifacts', async (c) => {
    const b = await body(c, artifactBody)
    const { db, clock, ids } = c.var.deps
    if (!getProject(db, b.project_id)) {
      throw new ApiError('NOT_FOUND', { message: `no Project with id "${b.project_id}"` })
    }
    const deployment =
      b.deployment_id === undefined ? undefined : getDeployment(db, b.deployment_id)
    if (b.deployment_id !== undefined && deployment?.project_id !== b.project_id) {
      throw new ApiError('NOT_FOUND', {
        message: `no Deployment with id "${b.deployment_id}" in Project "${b.project_id}"`,
      })
    }
    const nowMs = clock.nowMs()
    if (b.session_id !== undefined) {
      const session = findSession(db, b.session_id, nowMs)
      if (session?.project_id !== b.project_id) {
        throw new ApiError('NOT_FOUND', { message: `no Session with id "${b.session_id}"` })
      }
    }
    const artifact = createArtifact(db, {
      artifactId: ids.uuid(),
      fileId: ids.uuid(),
      projectId: b.project_id,
      deploymentId: b.deployment_id ?? null,
      sessionId: b.session_id ?? null,
      executionId: b.execution_id ?? null,
      filename: b.filename,
      mimeType: b.mime_type,
      bytes: new Uint8Array(Buffer.from(b.content_base64, 'base64')),
      nowMs,
      expiresAtMs:
        b.retention_seconds === undefined
          ? undefined
          : nowMs + Math.round(b.retention_seconds * 1000),
    })
    return c.json({ artifact_id: artifact.artifact_id, ...artifactDetail(artifact) }, 201)
  })

  // Extension: delete an artifact (its download addresses stop working; it is not issued again).
  app.delete('/artifacts/:artifact_id', (c) => {
    const id = c.req.param('artifact_id')
    if (!deleteArtifact(c.var.deps.db, id)) {
      throw new ApiError('NOT_FOUND', { message: `no undeleted artifact with id "${id}"` })
    }
    return c.json({ artifact_id: id, deleted: true })
  })

  // Extension: the Project's SU budget windows (UTC day and month) at the current virtual time.
  app.get('/projects/:project_id/budget', (c) => {
    const view = budgetView(c.var.deps, c.req.param('project_id'))
    if (!view) throw new ApiError('NOT_FOUND', { message: 'no such Project' })
    return c.json({ project_id: c.req.param('project_id'), ...view })
  })

  // Extension: rehearse PROJECT_BUDGET_EXCEEDED: set budgets, record settled spend (not charged to the balance).
  app.post('/projects/:project_id/budget', async (c) => {
    const b = await body(c, budgetBody)
    const projectId = c.req.param('project_id')
    const { db } = c.var.deps
    db.tx(() => {
      if (!setProjectBudgets(db, projectId, b))
        throw new ApiError('NOT_FOUND', { message: `no Project with id "${projectId}"` })
      const done = rehearseSpend(c.var.deps, projectId, b)
      if (!done.ok) throw new ApiError('INVALID_INPUT', { status: 422, message: done.problem })
    })
    return c.json({ project_id: projectId, ...budgetView(c.var.deps, projectId)! })
  })

  // Extension: replace a key's scopes (rehearse INSUFFICIENT_SCOPE, a key without works:approve, or a
  // withdrawn scope canceling running work).
  app.post('/keys/:key/scopes', async (c) => {
    const { scopes } = await body(c, scopesBody)
    const key = c.req.param('key')
    const deps = c.var.deps
    // STATE-019: open executions of the key that needed a withdrawn scope end AUTHORIZATION_REVOKED.
    const canceled = await deps.scheduler.exclusive(() =>
      deps.db.tx(() => {
        if (!setApiKeyScopes(deps.db, key, scopes))
          throw new ApiError('NOT_FOUND', { message: `no API key "${key}"` })
        return withdrawnExecutions(deps, key, acceptScopes())
      }),
    )
    return c.json({ key, scopes, canceled })
  })

  // Extension: the candidate setup of a preparation changes (a scope confirmation of the old one: PACKAGE_CHANGED).
  app.post('/preparations/:preparation_id/package', (c) => {
    const id = c.req.param('preparation_id')
    const changed = changeCandidatePackage(c.var.deps, id)
    if (!changed) throw new ApiError('NOT_FOUND', { message: `no preparation with id "${id}"` })
    if (!changed.ok) throw new ApiError('INVALID_TRANSITION', { message: changed.error.message })
    return c.json(changed.preparation)
  })

  return app
}
