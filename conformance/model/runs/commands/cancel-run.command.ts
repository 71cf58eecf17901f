/**
 * Cancels a Run: 200 and unchanged when it already ended (STATE-011), 202 CANCEL_REQUESTED while it runs
 * (STATE-008); it then stays CANCEL_REQUESTED until it ends (STATE-009). A deleted Run is NOT_FOUND.
 */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import { TERMINAL, knownOpen, pick, type Command, type Model, type Real } from '../world.js'

export class CancelRunCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.runs.length > 0
  async run(m: Model, r: Real) {
    const run = pick(m.runs, this.i)
    this.label = `${run.alias} seen ${run.seen}${run.deleted ? ' deleted' : ''}`
    const res = await r.api.post(
      `/v1/runs/${run.id}/cancel`,
      {},
      { key: m.key, idem: newIdempotencyKey('model-cancel') },
    )
    if (run.deleted) return void expect(res.status).toBe(404)
    const status = (res.body as { run?: { status: string } }).run?.status
    if (TERMINAL.has(run.seen)) {
      expect(res.status, res.text).toBe(200)
      expect(status).toBe(run.seen)
      return
    }
    if (knownOpen(m, run)) expect(res.status, res.text).toBe(202)
    else expect([200, 202]).toContain(res.status)
    if (res.status === 202) {
      expect(status).toBe('CANCEL_REQUESTED')
      run.cancelRequested = true
      run.seen = 'CANCEL_REQUESTED'
    } else {
      // It ended before the cancel arrived: the answer is its unchanged terminal detail.
      expect(TERMINAL.has(status ?? '')).toBe(true)
      run.seen = status!
    }
    run.seenAtS = m.nowS
  }
  toString = () => `CancelRun(${this.label || '#' + this.i})`
}
