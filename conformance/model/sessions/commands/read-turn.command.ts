/** Reads a Turn and checks it against the model (observeTurn); a deleted Session's Turn is 404 (DEL-001). */
import { expect } from 'vitest'
import { observeTurn, pick, type Command, type Model, type Real } from '../world.js'

export class ReadTurnCommand implements Command {
  private label = ''
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.sessions.length > 0
  async run(m: Model, r: Real) {
    const s = pick(m.sessions, this.i)
    const t = pick(s.turns, this.i)
    this.label = `${t.id.slice(0, 8)} ${t.scenario} seen ${t.seen}`
    const res = await r.api.get(t.statusUrl, { key: m.key })
    if (s.deleted)
      return void expect((res.body as { error: { code: string } }).error.code).toBe('NOT_FOUND')
    observeTurn(m, t, res)
  }
  toString = () => `ReadTurn(${this.label || '#' + this.i})`
}
