/** Reads a Run (RUN-001): checked against the model; a deleted Run is NOT_FOUND (DEL-001). */
import { expect } from 'vitest'
import { observeRun, pick, type Command, type Model, type Real } from '../world.js'

export class ReadRunCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.runs.length > 0
  async run(m: Model, r: Real) {
    const run = pick(m.runs, this.i)
    this.label = `${run.alias} seen ${run.seen}${run.deleted ? ' deleted' : ''}`
    const res = await r.api.get(`/v1/runs/${run.id}`, { key: m.key })
    if (run.deleted) {
      expect(res.status).toBe(404)
      return
    }
    observeRun(m, run, res)
  }
  toString = () => `ReadRun(${this.label || '#' + this.i})`
}
