/** Deletes a Session: 202, reads blocked at once (SES-025, DEL-001). */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import { pick, type Command, type Model, type Real, liveSessions } from '../world.js'

export class DeleteSessionCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => liveSessions(m).length > 0
  async run(m: Model, r: Real) {
    const s = pick(liveSessions(m), this.i)
    this.label = s.id.slice(0, 8)
    const res = await r.api.delete(
      `/v1/sessions/${s.id}`,
      {},
      { key: m.key, idem: newIdempotencyKey('model') },
    )
    expect(res.status, res.text).toBe(202)
    s.deleted = true
  }
  toString = () => `DeleteSession(${this.label || '#' + this.i})`
}
