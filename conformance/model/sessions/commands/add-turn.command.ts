/**
 * Adds input to a Session: SESSION_CLOSED when closed, SESSION_BUSY while a Turn runs (STATE-024, STATE-025),
 * or SESSION_UPDATING while its cancel is confirmed (the mock's assumed trigger, ERR-068; see busyCodes).
 */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import {
  TERMINAL,
  busyCodes,
  knownRunning,
  lastTurn,
  pick,
  type Command,
  type Model,
  type Real,
  liveSessions,
} from '../world.js'

export class AddTurnCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => liveSessions(m).length > 0
  async run(m: Model, r: Real) {
    const s = pick(liveSessions(m), this.i)
    const last = lastTurn(s)!
    this.label = `${s.id.slice(0, 8)} ${s.closed ? 'closed' : last.seen}`
    const body = {
      input: [{ type: 'TEXT', text: 'more' }],
      limits: { max_su: 1, queue_seconds: 600, execution_seconds: 3600 },
    }
    await r.control.queueScenario(m.deploymentId, 'succeed')
    m.queued.push('succeed')
    const res = await r.api.post(`/v1/sessions/${s.id}/turns`, body, {
      key: m.key,
      idem: newIdempotencyKey('model'),
    })
    const code = (res.body as { error?: { code: string } }).error?.code
    if (s.closed) return void expect(code).toBe('SESSION_CLOSED')
    if (knownRunning(m, last)) return void expect(busyCodes(last)).toContain(code)
    if (TERMINAL.has(last.seen)) {
      if (res.status === 429) return void expect(code).toBe('CONCURRENCY_LIMIT')
      expect(res.status, res.text).toBe(202)
    } else {
      expect(
        res.status === 202 ||
          code === 'SESSION_BUSY' ||
          code === 'SESSION_UPDATING' ||
          code === 'CONCURRENCY_LIMIT',
        res.text,
      ).toBe(true)
    }
    if (res.status !== 202) return
    const receipt = res.body as { turn_id: string; status_url: string; session_id: string }
    expect(receipt.session_id).toBe(s.id)
    s.turns.push({
      id: receipt.turn_id,
      sessionId: s.id,
      statusUrl: receipt.status_url,
      scenario: m.queued.shift()!,
      queueSeconds: 600,
      executionSeconds: 3600,
      acceptedAtS: m.nowS,
      seen: 'QUEUED',
      seenAtS: m.nowS,
      cancelRequested: false,
      started: false,
    })
  }
  toString = () => `AddTurn(${this.label || '#' + this.i})`
}
