/**
 * The Session/Turn model of the model-based test: what the suite believes from the interface document
 * (Turn statuses, terminal statuses that never change, time limits, one Turn at a time, closed Sessions,
 * deletion) and from MOCK-CONTRACT's scenario scripts. It is written from those documents, never from mock/.
 */
import type fc from 'fast-check'
import { expect } from 'vitest'
import type { ApiClient, ApiResponse } from '../../support/client.js'
import type { MockControl } from '../../support/control.js'

export const TURN_STATUSES = [
  'QUEUED',
  'RUNNING',
  'REQUIRES_ACTION',
  'CANCEL_REQUESTED',
  'SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
]
export const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELED', 'EXPIRED'])

/** Scenarios of MOCK-CONTRACT the model uses, with the terminal outcomes each may reach. */
export const SCENARIOS = {
  // On its own terms the script ends SUCCEEDED; a wait past queue_seconds expires it, a cancel cancels it.
  succeed: { ends: ['SUCCEEDED'], codes: [] as string[] },
  fail: { ends: ['FAILED'], codes: ['EXECUTION_FAILED'] },
  // slow works until a time limit or a cancel ends it.
  slow: { ends: ['FAILED'], codes: ['EXECUTION_TIMEOUT'] },
} as const
export type ScenarioName = keyof typeof SCENARIOS

export type ModelTurn = {
  id: string
  sessionId: string
  statusUrl: string
  scenario: ScenarioName
  queueSeconds: number
  executionSeconds: number
  acceptedAtS: number
  /** Last status read and the model time it was read at. */
  seen: string
  seenAtS: number
  cancelRequested: boolean
  /** started_at was set when last read: the execution took a Project slot and began. */
  started: boolean
}

export type ModelSession = { id: string; closed: boolean; deleted: boolean; turns: ModelTurn[] }

export type Model = {
  nowS: number
  sessions: ModelSession[]
  deploymentId: string
  key: string
  /**
   * Scenarios queued for the Deployment and not yet taken, oldest first (MOCK-CONTRACT: a queued scenario is
   * used by the next execution of its target, so one left by a refused create goes to the next accepted one).
   */
  queued: ScenarioName[]
  /** Create receipts by Idempotency-Key, for resends (IDEM-001). */
  receipts: { idem: string; body: unknown; receipt: unknown; atS: number }[]
}

export type Real = { api: ApiClient; control: MockControl }
export type Command = fc.AsyncCommand<Model, Real>

/** The Turns of live Sessions. */
export const liveTurns = (m: Model): ModelTurn[] => liveSessions(m).flatMap((s) => s.turns)

/** The Sessions not deleted. */
export const liveSessions = (m: Readonly<Model>): ModelSession[] =>
  m.sessions.filter((s) => !s.deleted)

/** The newest Turn of a Session. */
export const lastTurn = (s: ModelSession): ModelTurn | undefined => s.turns.at(-1)

/** True when the model knows the Turn has not ended: seen non-terminal and no time has passed since. */
export const knownRunning = (m: Model, t: ModelTurn): boolean =>
  !TERMINAL.has(t.seen) && t.seenAtS === m.nowS

/**
 * The codes for input or close while the Session's last Turn has not ended: SESSION_BUSY; while a cancel is
 * being confirmed also 503 SESSION_UPDATING, the mock's assumed trigger of ERR-068 (the document names none,
 * so the model accepts either).
 */
export const busyCodes = (t: ModelTurn): string[] =>
  t.seen === 'CANCEL_REQUESTED' ? ['SESSION_BUSY', 'SESSION_UPDATING'] : ['SESSION_BUSY']

const RANK: Record<string, number> = {
  QUEUED: 0,
  RUNNING: 1,
  REQUIRES_ACTION: 1,
  CANCEL_REQUESTED: 2,
}
const rank = (s: string) => (TERMINAL.has(s) ? 3 : (RANK[s] ?? -1))

/**
 * Checks a freshly read Turn against the document and records it (STATE-001, STATE-002, STATE-006,
 * STATE-007, SES-019, BUD-007).
 */
export function observeTurn(m: Model, t: ModelTurn, res: ApiResponse): void {
  expect(res.status, res.text).toBe(200)
  const body = res.body as {
    status: string
    error: { code: string } | null
    usage: { status: string; total_su: number | null }
    created_at: string
    started_at?: string | null
  }
  const status = body.status
  expect(TURN_STATUSES).toContain(status)
  // STATE-002: a terminal status never changes; statuses never move backwards.
  if (TERMINAL.has(t.seen)) expect(status).toBe(t.seen)
  expect(rank(status)).toBeGreaterThanOrEqual(rank(t.seen))
  // STATE-006: nothing is still QUEUED once its queue time limit has passed.
  if (m.nowS > t.acceptedAtS + t.queueSeconds) expect(status).not.toBe('QUEUED')
  // STATE-006: an execution starts within its queue time limit or never.
  if (body.started_at) {
    expect(Date.parse(body.started_at) - Date.parse(body.created_at)).toBeLessThanOrEqual(
      t.queueSeconds * 1000,
    )
  }
  // STATE-007: nothing still runs once queue and execution limits have both passed.
  if (m.nowS > t.acceptedAtS + t.queueSeconds + t.executionSeconds + 2)
    expect(TERMINAL.has(status)).toBe(true)
  // SES-019, BUD-007: usage is FINAL with a number exactly when the Turn ended.
  if (TERMINAL.has(status)) {
    expect(body.usage.status).toBe('FINAL')
    expect(typeof body.usage.total_su).toBe('number')
    const allowed = new Set<string>([
      ...SCENARIOS[t.scenario].ends,
      'EXPIRED',
      ...(t.cancelRequested ? ['CANCELED'] : []),
    ])
    if (t.executionSeconds < 3600 || t.scenario === 'slow') allowed.add('FAILED')
    expect([...allowed]).toContain(status)
    if (status === 'EXPIRED') expect(body.error?.code).toBe('QUEUE_TIMEOUT')
    if (status === 'CANCELED') expect(body.error?.code).toBe('CANCELED')
    if (status === 'SUCCEEDED') expect(body.error).toBeNull()
  } else {
    expect(body.usage).toMatchObject({ status: 'PENDING', total_su: null })
    if (t.cancelRequested) expect(status).toBe('CANCEL_REQUESTED')
  }
  t.seen = status
  t.seenAtS = m.nowS
  t.started = Boolean(body.started_at)
}

/** Picks the i-th element of a non-empty list modulo its length (shrinking keeps commands valid). */
export const pick = <T>(list: readonly T[], i: number): T => list[i % list.length]!
