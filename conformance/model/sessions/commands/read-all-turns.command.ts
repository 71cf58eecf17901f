/** Reads every Turn of the live Sessions at one instant: each is checked, and at most 2 run (CONC-001). */
import { expect } from 'vitest'
import { TERMINAL, liveTurns, observeTurn, type Command, type Model, type Real } from '../world.js'

export class ReadAllTurnsCommand implements Command {
  check = (m: Readonly<Model>) => liveTurns(m as Model).length > 0
  async run(m: Model, r: Real) {
    let started = 0
    for (const t of liveTurns(m)) {
      const res = await r.api.get(t.statusUrl, { key: m.key })
      observeTurn(m, t, res)
      if (!TERMINAL.has(t.seen) && t.started) started++
    }
    // CONC-001: a Project runs at most 2 executions at a time. A Turn canceled while it waited for a slot is
    // CANCEL_REQUESTED without having started: it is not running.
    expect(started).toBeLessThanOrEqual(2)
  }
  toString = () => 'ReadAllTurns()'
}
