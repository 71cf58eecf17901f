/**
 * The mock-only control API under /_mock (MOCK-CONTRACT "Control API"): fixtures, clock, clock advance,
 * reset and scenario queueing, plus GET /_mock/scenarios (an extension listing scenarios and the queue).
 */
import { Hono, type Context } from 'hono'
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js'
import { CLOCK_MODES, type ClockMode } from '../clock/clock.js'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import {
  BUILTIN_SCENARIOS,
  builtinScenario,
  type ScenarioDefinition,
} from '../execution/scenarios.js'
import { fixturesView, resetWorld } from '../fixtures/load.js'
import { getDeployment } from '../store/deployments.js'
import {
  enqueueScenario,
  getFixtureScenario,
  listFixtureScenarios,
  listScenarioQueue,
} from '../store/scenarios.js'
import { getWorkflow } from '../store/workflows.js'

const ajv = new Ajv2020({ allErrors: true, strict: true })

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
const scenarioBody = ajv.compile<{ target_id: string; scenario: string; times?: number }>({
  type: 'object',
  additionalProperties: false,
  required: ['target_id', 'scenario'],
  properties: {
    target_id: { type: 'string', minLength: 1 },
    scenario: { type: 'string', minLength: 1 },
    times: { type: 'integer', minimum: 1, maximum: 1000 },
  },
})

type Validator<T> = ((data: unknown) => data is T) & { errors?: ErrorObject[] | null }

/** Reads a JSON body (empty means {}) and validates it: INVALID_INPUT 400 when not JSON, 422 when invalid. */
async function body<T>(c: Context<Env>, validate: Validator<T>): Promise<T> {
  const text = await c.req.text()
  let data: unknown = {}
  if (text.trim() !== '') {
    try {
      data = JSON.parse(text)
    } catch {
      throw new ApiError('INVALID_INPUT', {
        status: 400,
        message: 'request body is not valid JSON',
      })
    }
  }
  if (!validate(data)) {
    const errors = (validate.errors ?? []).map((e) => ({
      path: e.instancePath || '/',
      message:
        e.keyword === 'additionalProperties'
          ? `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`
          : (e.message ?? 'invalid'),
    }))
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `invalid body: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      details: { errors },
    })
  }
  return data
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** A scenario by name: built-in first, then the fixture world's. */
function findScenario(c: Context<Env>, name: string): ScenarioDefinition | undefined {
  return builtinScenario(name) ?? getFixtureScenario(c.var.deps.db, name)
}

/** The /_mock sub-app. */
export function controlRoutes(): Hono<Env> {
  const app = new Hono<Env>()

  app.get('/fixtures', (c) => c.json(fixturesView(c.var.deps.db)))

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
    // Answers only after every timer due in the window has fired and its side effects are done.
    const { now } = await c.var.deps.scheduler.advanceBy(Math.round(seconds * 1000))
    return c.json({ now: iso(now) })
  })

  app.post('/reset', async (c) => {
    await body(c, resetBody)
    const now = await resetWorld(c.var.deps)
    return c.json({ now: iso(now) })
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
    const { target_id, scenario, times = 1 } = await body(c, scenarioBody)
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
    const queued = enqueueScenario(db, target_id, scenario, times)
    return c.json({ target_id, target, scenario: queued.scenario, times: queued.remaining }, 201)
  })

  return app
}
