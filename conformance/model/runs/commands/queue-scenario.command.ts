/** Queues a MOCK-CONTRACT scenario for the workflow's next Run (mock only). */
import type { Command, Model, QueueableScenario, Real } from '../world.js'

export class QueueScenarioCommand implements Command {
  constructor(readonly scenario: QueueableScenario) {}
  check = (m: Readonly<Model>) => m.virtualTime && m.queued.length < 5
  async run(m: Model, r: Real) {
    await r.control!.queueScenario(m.workflowId, this.scenario)
    m.queued.push(this.scenario)
  }
  toString = () => `QueueScenario(${this.scenario})`
}
