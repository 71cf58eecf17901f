/**
 * The Run model of the model-based test: what the suite believes from the interface document's Run statuses,
 * transition table and rules (terminal statuses never change, cancel, delete, deadlines, queue time, outputs
 * held back until the end, usage PENDING until settled, progress) and from MOCK-CONTRACT's scenario scripts.
 * It is written from those documents, never from mock/.
 */
import type fc from 'fast-check'
import { expect } from 'vitest'
import type { ApiClient, ApiResponse } from '../../support/client.js'
import type { MockControl } from '../../support/control.js'

export const RUN_STATUSES = [
  'QUEUED',
  'RUNNING',
  'REQUIRES_ACTION',
  'CANCEL_REQUESTED',
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
]
export const TERMINAL = new Set([
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
])

/**
 * MOCK-CONTRACT scenarios with the terminal outcomes each reaches on its own terms ("status/CODE"). `unknown`
 * is a Run on a real target, where no scenario can be queued: any documented outcome is possible.
 */
export const SCENARIOS = {
  succeed: ['SUCCEEDED'],
  fail: ['FAILED/EXECUTION_FAILED'],
  // slow works until a time limit (one step's execution_seconds, or the whole-Run deadline) or a cancel.
  slow: ['FAILED/EXECUTION_TIMEOUT'],
  partial: ['PARTIALLY_SUCCEEDED', 'FAILED/OUTPUT_SCHEMA_MISMATCH'],
  'missing-output': ['FAILED/OUTPUT_MISSING'],
  'needs-action': ['FAILED/ACTION_REQUIRED_UNSUPPORTED'],
  unknown: ['SUCCEEDED', 'PARTIALLY_SUCCEEDED', 'FAILED/*'],
} as const satisfies Record<string, readonly string[]>
export type ScenarioName = keyof typeof SCENARIOS
export type QueueableScenario = Exclude<ScenarioName, 'unknown'>

export type ModelRun = {
  id: string
  alias: string
  scenario: ScenarioName
  publishedVersion: number
  queueSeconds: number
  runSeconds: number
  acceptedAtS: number
  /** Last status read and the model time it was read at. */
  seen: string
  seenAtS: number
  /** progress.total as first read (fixed at acceptance). */
  progressTotal: number | undefined
  /** The outputs' ids once terminal (published once, then unchanged). */
  finalOutputs: string[] | undefined
  cancelRequested: boolean
  deleted: boolean
}

export type Model = {
  nowS: number
  workflowId: string
  publishedVersion: number
  /** Keys of the workflow's outputs marked required (outputs contract entries with required true). */
  requiredKeys: string[]
  key: string
  runs: ModelRun[]
  /** Scenarios queued for the workflow's next Runs, in order (MOCK-CONTRACT POST /_mock/scenarios). */
  queued: QueueableScenario[]
  virtualTime: boolean
}

export type Real = { api: ApiClient; control: MockControl | undefined }
export type Command = fc.AsyncCommand<Model, Real>

/** Picks the i-th element of a non-empty list modulo its length (shrinking keeps commands valid). */
export const pick = <T>(list: readonly T[], i: number): T => list[i % list.length]!

export const liveRuns = (m: Readonly<Model>): ModelRun[] => m.runs.filter((r) => !r.deleted)

/** True when the model knows the Run has not ended: seen non-terminal and no time has passed since. */
export const knownOpen = (m: Readonly<Model>, r: ModelRun): boolean =>
  !TERMINAL.has(r.seen) && r.seenAtS === m.nowS

const rank = (s: string): number =>
  TERMINAL.has(s) ? 3 : s === 'CANCEL_REQUESTED' ? 2 : s === 'QUEUED' ? 0 : 1

type RunBody = {
  run: {
    id: string
    published_version: number
    status: string
    phase: string | null
    usage: { status: string; total_su: number | null }
    error: { code: string; retryable?: boolean } | null
    progress: { total: number; completed: number }
  }
  outputs: { id: string; key: string; error: { code: string } | null }[]
  next_cursor: string | null
}

/** The "status/CODE" outcomes a Run may end with, from its scenario and what happened to it. */
function allowedEnds(m: Readonly<Model>, r: ModelRun): string[] {
  const ends: string[] = [...SCENARIOS[r.scenario]]
  // STATE-006: a Run that waited past its queue time expires; STATE-014: so does one at its deadline.
  ends.push('EXPIRED/QUEUE_TIMEOUT', 'EXPIRED/RUN_DEADLINE_EXCEEDED')
  // STATE-007: a step over its execution time limit fails (the model's Runs keep the default 3,600 s).
  if (m.nowS - r.acceptedAtS > 3600) ends.push('FAILED/EXECUTION_TIMEOUT')
  if (r.cancelRequested) {
    // STATE-009, STATE-012: a cancel ends CANCELED, or FAILED when an external effect is unconfirmed.
    return ['CANCELED/CANCELED', 'FAILED/EXTERNAL_EFFECT_UNKNOWN', 'EXPIRED/RUN_DEADLINE_EXCEEDED']
  }
  return ends
}

const matches = (allowed: string[], status: string, code: string | undefined): boolean =>
  allowed.some((a) => {
    const [s, c] = a.split('/')
    return s === status && (c === undefined ? code === undefined : c === '*' || c === code)
  })

/**
 * Checks a Run read against the document and records it: statuses (STATE-001), terminal never changes
 * (STATE-002), no going back, cancel (STATE-009), queue time and deadline (STATE-006, STATE-014), outputs
 * only at the end (RUN-010, RUN-011), partial results (STATE-028), usage (RUN-005), progress (RUN-007),
 * published_version (RUN-004).
 */
export function observeRun(m: Model, r: ModelRun, res: ApiResponse): void {
  expect(res.status, res.text).toBe(200)
  const { run, outputs, next_cursor } = res.body as RunBody
  const status = run.status
  expect(run.id).toBe(r.id)
  expect(RUN_STATUSES).toContain(status)
  if (TERMINAL.has(r.seen)) expect(status).toBe(r.seen)
  expect(rank(status), `${r.seen} -> ${status}`).toBeGreaterThanOrEqual(rank(r.seen))
  expect(run.published_version).toBe(r.publishedVersion)
  // RUN-007: progress.total is fixed at acceptance; completed never exceeds it.
  r.progressTotal ??= run.progress.total
  expect(run.progress.total).toBe(r.progressTotal)
  expect(run.progress.completed).toBeLessThanOrEqual(run.progress.total)
  // RUN-005: total_su is null until usage is FINAL.
  if (run.usage.status === 'PENDING') expect(run.usage.total_su).toBeNull()
  else expect(typeof run.usage.total_su).toBe('number')
  if (m.virtualTime) {
    // STATE-006 with the whole-Run total: nothing is QUEUED once its queue time has passed.
    if (m.nowS > r.acceptedAtS + Math.min(r.queueSeconds, 3600)) expect(status).not.toBe('QUEUED')
    // STATE-014: nothing is open once the whole-Run deadline has passed.
    if (m.nowS >= r.acceptedAtS + r.runSeconds) expect(TERMINAL.has(status)).toBe(true)
  }
  if (!TERMINAL.has(status)) {
    // RUN-010: no outputs before the end; usage not settled.
    expect(outputs).toEqual([])
    expect(next_cursor).toBeNull()
    expect(run.usage).toMatchObject({ status: 'PENDING', total_su: null })
    if (r.cancelRequested) expect(status).toBe('CANCEL_REQUESTED')
  } else {
    const code = run.error?.code
    expect(
      matches(allowedEnds(m, r), status, code),
      `${r.alias} (${r.scenario}${r.cancelRequested ? ', cancel requested' : ''}) ended ${status}/${code}`,
    ).toBe(true)
    if (run.error) expect(run.error.retryable ?? false).toBe(false)
    const good = new Set(outputs.filter((o) => o.error === null).map((o) => o.key))
    if (status === 'SUCCEEDED' || status === 'PARTIALLY_SUCCEEDED') {
      // STATE-016: a Run without a required output never succeeds.
      for (const k of m.requiredKeys) expect(good.has(k), `required output ${k}`).toBe(true)
    }
    // State rule 5: PARTIALLY_SUCCEEDED only when some optional output failed.
    if (status === 'PARTIALLY_SUCCEEDED') {
      const failed = outputs.filter((o) => o.error !== null)
      expect(failed.length).toBeGreaterThan(0)
      for (const o of failed) expect(m.requiredKeys).not.toContain(o.key)
    }
    // RUN-011: the outputs are published with the terminal status and then stay the same.
    const ids = outputs.map((o) => o.id)
    if (r.finalOutputs) expect(ids).toEqual(r.finalOutputs)
    r.finalOutputs = ids
  }
  r.seen = status
  r.seenAtS = m.nowS
}
