/** Cancels a Turn (assumed path): 200 when it already ended, 202 while it runs; it then ends CANCELED. */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import {
  TERMINAL,
  knownRunning,
  pick,
  type Command,
  type Model,
  type Real,
  liveSessions,
} from '../world.js'

export class CancelTurnCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => liveSessions(m).length > 0
  async run(m: Model, r: Real) {
    const s = pick(liveSessions(m), this.i)
    const t = pick(s.turns, this.i)
    this.label = `${t.id.slice(0, 8)} seen ${t.seen}`
    const res = await r.api.post(
      `${t.statusUrl}/cancel`,
      {},
      { key: m.key, idem: newIdempotencyKey('model') },
    )
    if (TERMINAL.has(t.seen)) return void expect(res.status).toBe(200)
    if (knownRunning(m, t)) expect(res.status, res.text).toBe(202)
    else expect([200, 202]).toContain(res.status)
    if (res.status === 202) {
      t.cancelRequested = true
      t.seen = 'CANCEL_REQUESTED'
      t.seenAtS = m.nowS
    }
  }
  toString = () => `CancelTurn(${this.label || '#' + this.i})`
}
