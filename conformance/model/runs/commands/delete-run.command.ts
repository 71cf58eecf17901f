/** Deletes a Run: 202, then every read is NOT_FOUND at once (RUN-021, DEL-001); again with a new key: 404. */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import { pick, type Command, type Model, type Real } from '../world.js'

export class DeleteRunCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.runs.length > 0
  async run(m: Model, r: Real) {
    const run = pick(m.runs, this.i)
    this.label = `${run.alias} seen ${run.seen}${run.deleted ? ' deleted' : ''}`
    const res = await r.api.delete(
      `/v1/runs/${run.id}`,
      {},
      { key: m.key, idem: newIdempotencyKey('model-delete') },
    )
    if (run.deleted) return void expect(res.status).toBe(404)
    expect(res.status, res.text).toBe(202)
    run.deleted = true
    expect((await r.api.get(`/v1/runs/${run.id}`, { key: m.key })).status).toBe(404)
  }
  toString = () => `DeleteRun(${this.label || '#' + this.i})`
}
