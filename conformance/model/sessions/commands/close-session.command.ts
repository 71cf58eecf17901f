/** Closes a Session (assumed path): 200 CLOSED when idle, 409 SESSION_BUSY while a Turn runs (assumed). */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import {
  busyCodes,
  TERMINAL,
  knownRunning,
  lastTurn,
  pick,
  type Command,
  type Model,
  type Real,
  liveSessions,
} from '../world.js'

export class CloseSessionCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => liveSessions(m).length > 0
  async run(m: Model, r: Real) {
    const s = pick(liveSessions(m), this.i)
    const last = lastTurn(s)!
    this.label = `${s.id.slice(0, 8)} ${last.seen}`
    const res = await r.api.post(
      `/v1/sessions/${s.id}/close`,
      {},
      { key: m.key, idem: newIdempotencyKey('model') },
    )
    if (knownRunning(m, last))
      return void expect(busyCodes(last)).toContain(
        (res.body as { error: { code: string } }).error.code,
      )
    if (TERMINAL.has(last.seen) || s.closed) expect(res.status, res.text).toBe(200)
    if (res.status === 200) {
      expect((res.body as { status: string }).status).toBe('CLOSED')
      s.closed = true
    }
  }
  toString = () => `CloseSession(${this.label || '#' + this.i})`
}
