/**
 * Built-in scenarios of MOCK-CONTRACT as data: scripts on virtual time that an accepted execution follows.
 * No engine here: the executor (a later feature) turns each step into a timer and applies the document's rules.
 */
import { ERROR_CATALOG, type ErrorCode } from '../../spec/index.js'

/** What a step's output produces. `contract` binds it to the target's result contract instead of a fixed key. */
export type OutputSpec = {
  /** Output key; default: the key picked by `contract`, else "result". */
  key?: string
  /**
   * "required" / "optional": use the key of the first required / optional output of the Deployment's or
   * Workflow's result contract (so one scenario fits every fixture).
   */
  contract?: 'required' | 'optional'
  /** INTERMEDIATE, PARTIAL or FINAL (default FINAL). */
  visibility?: 'INTERMEDIATE' | 'PARTIAL' | 'FINAL'
  /** This output item fails with an execution error code (the `partial` scenario). */
  error_code?: ErrorCode
} & (
  | { type: 'TEXT'; text: string }
  | { type: 'JSON'; data: unknown; schema_ref?: string }
  | { type: 'FILE'; filename: string; mime_type: string; content: string }
  | { type: 'URL'; url: string; access?: 'PUBLIC' | 'AUTHENTICATED' | 'UNKNOWN' }
)

/**
 * The step vocabulary. `at` is seconds after the execution is accepted; steps run in list order.
 * - running: QUEUED -> RUNNING (sets started_at).
 * - output: produces one output item (kept back and published with the terminal status for a Run).
 * - spend: consumes `su` SU (reserved, settled at the end). Spending past the execution's max_su fails it
 *   with BUDGET_EXCEEDED (the executor's budget rule, not the script, ends it). su 101 is past every max_su.
 * - action_required: a human answer or approval becomes necessary. In the private beta the facility is not
 *   provided, so the executor fails the execution with ACTION_REQUIRED_UNSUPPORTED.
 * - succeed: the execution ends on its own terms; the executor still applies the result rules (a missing
 *   required output -> OUTPUT_MISSING, a credential pattern -> OUTPUT_CONTAINS_CREDENTIALS, a failed optional
 *   output with allows_partial -> PARTIALLY_SUCCEEDED) before settling usage FINAL.
 * - fail: the execution ends FAILED with an execution error code.
 * A script without a terminal step (succeed / fail) runs until a time limit or a cancel ends it (`slow`).
 */
export type ScenarioStep =
  | { at: number; step: 'running' }
  | { at: number; step: 'output'; output: OutputSpec }
  | { at: number; step: 'spend'; su: number }
  | { at: number; step: 'action_required' }
  | { at: number; step: 'succeed' }
  | { at: number; step: 'fail'; code: ErrorCode; message?: string }

export type StepName = ScenarioStep['step']
export const STEP_NAMES: readonly StepName[] = [
  'running',
  'output',
  'spend',
  'action_required',
  'succeed',
  'fail',
]
const TERMINAL: ReadonlySet<StepName> = new Set(['succeed', 'fail'])

/** Which executions a scenario may be queued for. */
export type ScenarioTarget = 'deployment' | 'workflow'

export type ScenarioDefinition = {
  name: string
  description: string
  applies_to: ScenarioTarget[]
  steps: ScenarioStep[]
}

/** The default for an execution with nothing queued. */
export const DEFAULT_SCENARIO = 'succeed'

const BOTH: ScenarioTarget[] = ['deployment', 'workflow']
const SMALL_SU = 0.25

/** The built-in scenarios of MOCK-CONTRACT, by name. */
export const BUILTIN_SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: 'succeed',
    description:
      'RUNNING at 1, a FINAL TEXT output at 4, SUCCEEDED at 5, usage FINAL with a small positive total_su',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'Done: the mock finished the task.' },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'slow',
    description: 'RUNNING at 1, then works until a time limit or cancel ends it',
    applies_to: BOTH,
    steps: [{ at: 1, step: 'running' }],
  },
  {
    name: 'fail',
    description: 'RUNNING at 1, FAILED with EXECUTION_FAILED at 3',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: SMALL_SU },
      { at: 3, step: 'fail', code: 'EXECUTION_FAILED' },
    ],
  },
  {
    name: 'json-output',
    description: 'as succeed, with a JSON output',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'required',
          type: 'JSON',
          data: { status: 'ok', items: [1, 2, 3] },
          schema_ref: 'mock:json-output',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'file-output',
    description:
      'as succeed, with a FILE output (a small text file) whose artifact can be downloaded',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'required',
          type: 'FILE',
          filename: 'report.txt',
          mime_type: 'text/plain',
          content: 'Mock report.\n',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'url-output',
    description: 'as succeed, with a URL output (public HTTPS address)',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'required',
          type: 'URL',
          url: 'https://example.com/reports/42',
          access: 'PUBLIC',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'needs-action',
    description: 'RUNNING at 1, FAILED with ACTION_REQUIRED_UNSUPPORTED at 2',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: SMALL_SU },
      { at: 2, step: 'action_required' },
    ],
  },
  {
    name: 'credential-leak',
    description:
      'produces a result holding a credential pattern; FAILED with OUTPUT_CONTAINS_CREDENTIALS',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 3, step: 'spend', su: SMALL_SU },
      {
        at: 3,
        step: 'output',
        output: {
          contract: 'required',
          type: 'TEXT',
          text: 'Use this key: AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        },
      },
      { at: 4, step: 'succeed' },
    ],
  },
  {
    name: 'over-budget',
    description: "spends past the execution's max_su; FAILED with BUDGET_EXCEEDED",
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: 101 },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'partial',
    description:
      '(Runs) an optional output fails; PARTIALLY_SUCCEEDED, the code on that output item',
    applies_to: ['workflow'],
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'The required part is done.' },
      },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'optional',
          type: 'JSON',
          data: null,
          error_code: 'OUTPUT_SCHEMA_MISMATCH',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'missing-output',
    description: '(Runs) a required output is not produced; FAILED with OUTPUT_MISSING',
    applies_to: ['workflow'],
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      { at: 5, step: 'succeed' },
    ],
  },
]

const BUILTIN_BY_NAME = new Map(BUILTIN_SCENARIOS.map((s) => [s.name, s]))

/** A built-in scenario by name. */
export function builtinScenario(name: string): ScenarioDefinition | undefined {
  return BUILTIN_BY_NAME.get(name)
}

/** A scenario name: lowercase words joined by dashes, as the built-in ones. */
export const SCENARIO_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** Thrown by assertScenario with every problem found. */
export class ScenarioError extends Error {
  constructor(
    readonly scenario: string,
    readonly problems: string[],
  ) {
    super(`invalid scenario "${scenario}":\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ScenarioError'
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks a scenario definition; returns the list of problems (empty when valid), each naming its step. */
export function validateScenario(def: unknown): string[] {
  const problems: string[] = []
  if (!isObject(def)) return ['a scenario must be an object {name, description, applies_to, steps}']
  if (typeof def.name !== 'string' || !SCENARIO_NAME_PATTERN.test(def.name)) {
    problems.push('name must be lowercase words joined by dashes, e.g. "slow-then-fail"')
  }
  if (typeof def.description !== 'string') problems.push('description must be a string')
  if (
    !Array.isArray(def.applies_to) ||
    def.applies_to.length === 0 ||
    !def.applies_to.every((t) => t === 'deployment' || t === 'workflow')
  ) {
    problems.push('applies_to must be a non-empty list of "deployment" and/or "workflow"')
  }
  if (!Array.isArray(def.steps) || def.steps.length === 0) {
    problems.push('steps must be a non-empty list')
    return problems
  }
  let lastAt = 0
  let terminalAt: number | undefined
  def.steps.forEach((raw: unknown, i: number) => {
    const where = `steps[${i}]`
    if (!isObject(raw)) {
      problems.push(`${where} must be an object {at, step, ...}`)
      return
    }
    const { at, step } = raw
    if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) {
      problems.push(`${where}.at must be a number of seconds >= 0`)
    } else if (at < lastAt) {
      problems.push(
        `${where}.at (${at}) is earlier than the step before it (${lastAt}): steps must be in time order`,
      )
    } else {
      lastAt = at
    }
    if (typeof step !== 'string' || !(STEP_NAMES as readonly string[]).includes(step)) {
      problems.push(`${where}.step must be one of ${STEP_NAMES.join(', ')}`)
      return
    }
    if (terminalAt !== undefined)
      problems.push(`${where} comes after the terminal step at index ${terminalAt}`)
    if (TERMINAL.has(step as StepName)) terminalAt = i
    const allowed = new Set(['at', 'step'])
    switch (step) {
      case 'output':
        allowed.add('output')
        problems.push(...validateOutput(raw.output, `${where}.output`))
        break
      case 'spend':
        allowed.add('su')
        if (typeof raw.su !== 'number' || !(raw.su > 0))
          problems.push(`${where}.su must be a number > 0`)
        break
      case 'fail':
        allowed.add('code').add('message')
        if (!isExecutionCode(raw.code)) {
          problems.push(
            `${where}.code must be an execution error code of the catalog (e.g. EXECUTION_FAILED)`,
          )
        }
        if (raw.message !== undefined && typeof raw.message !== 'string')
          problems.push(`${where}.message must be a string`)
        break
    }
    for (const k of Object.keys(raw))
      if (!allowed.has(k)) problems.push(`${where} has an unknown field "${k}"`)
  })
  return problems
}

/** validateScenario, throwing a ScenarioError; narrows the value to a ScenarioDefinition. */
export function assertScenario(def: unknown): asserts def is ScenarioDefinition {
  const problems = validateScenario(def)
  if (problems.length > 0) {
    const name = isObject(def) && typeof def.name === 'string' ? def.name : '?'
    throw new ScenarioError(name, problems)
  }
}

function isExecutionCode(code: unknown): code is ErrorCode {
  return (
    typeof code === 'string' &&
    Object.hasOwn(ERROR_CATALOG, code) &&
    'execution' in ERROR_CATALOG[code as ErrorCode]
  )
}

const OUTPUT_FIELDS: Record<string, string[]> = {
  TEXT: ['text'],
  JSON: ['data', 'schema_ref'],
  FILE: ['filename', 'mime_type', 'content'],
  URL: ['url', 'access'],
}

function validateOutput(o: unknown, where: string): string[] {
  if (!isObject(o)) return [`${where} must be an object {type, ...}`]
  const problems: string[] = []
  const type = o.type
  if (typeof type !== 'string' || !(type in OUTPUT_FIELDS)) {
    return [`${where}.type must be one of TEXT, JSON, FILE, URL`]
  }
  const allowed = new Set([
    'type',
    'key',
    'contract',
    'visibility',
    'error_code',
    ...OUTPUT_FIELDS[type]!,
  ])
  for (const k of Object.keys(o))
    if (!allowed.has(k)) problems.push(`${where} has an unknown field "${k}" for type ${type}`)
  if (o.key !== undefined && (typeof o.key !== 'string' || o.key === ''))
    problems.push(`${where}.key must be a non-empty string`)
  if (o.contract !== undefined && o.contract !== 'required' && o.contract !== 'optional') {
    problems.push(`${where}.contract must be "required" or "optional"`)
  }
  if (
    o.visibility !== undefined &&
    !['INTERMEDIATE', 'PARTIAL', 'FINAL'].includes(o.visibility as string)
  ) {
    problems.push(`${where}.visibility must be INTERMEDIATE, PARTIAL or FINAL`)
  }
  if (o.error_code !== undefined && !isExecutionCode(o.error_code)) {
    problems.push(`${where}.error_code must be an execution error code of the catalog`)
  }
  switch (type) {
    case 'TEXT':
      if (typeof o.text !== 'string') problems.push(`${where}.text must be a string`)
      break
    case 'JSON':
      if (!('data' in o)) problems.push(`${where}.data is required (any JSON value)`)
      if (o.schema_ref !== undefined && typeof o.schema_ref !== 'string')
        problems.push(`${where}.schema_ref must be a string`)
      break
    case 'FILE':
      for (const f of ['filename', 'mime_type', 'content']) {
        if (typeof o[f] !== 'string') problems.push(`${where}.${f} must be a string`)
      }
      break
    case 'URL':
      if (typeof o.url !== 'string') problems.push(`${where}.url must be a string`)
      if (
        o.access !== undefined &&
        !['PUBLIC', 'AUTHENTICATED', 'UNKNOWN'].includes(o.access as string)
      ) {
        problems.push(`${where}.access must be PUBLIC, AUTHENTICATED or UNKNOWN`)
      }
      break
  }
  return problems
}
