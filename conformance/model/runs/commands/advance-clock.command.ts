/** Moves virtual time forward (mock only): time is one of the commands. */
import type { Command, Model, Real } from '../world.js'

export class AdvanceClockCommand implements Command {
  constructor(readonly seconds: number) {}
  check = (m: Readonly<Model>) => m.virtualTime
  async run(m: Model, r: Real) {
    await r.control!.advance(this.seconds)
    m.nowS += this.seconds
  }
  toString = () => `AdvanceClock(${this.seconds}s)`
}
