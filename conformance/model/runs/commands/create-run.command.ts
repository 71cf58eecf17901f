/**
 * Starts a Run (STATE-005, RUN-014): with a scenario, it is queued first (mock only); the Run takes the oldest
 * queued scenario, else MOCK-CONTRACT's default `succeed`. 202 and QUEUED; a refusal for concurrency or
 * budget (429, 402) is documented too and changes nothing.
 */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import type { Command, Model, QueueableScenario, Real } from '../world.js'

export class CreateRunCommand implements Command {
  private label = ''
  constructor(
    readonly scenario: QueueableScenario | undefined,
    readonly queueSeconds: number,
    readonly runSeconds: number,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    if (this.scenario && r.control) {
      await r.control.queueScenario(m.workflowId, this.scenario)
      m.queued.push(this.scenario)
    }
    const body = {
      published_version: m.publishedVersion,
      input: { topic: 'model' },
      limits: { queue_seconds: this.queueSeconds, run_seconds: this.runSeconds, max_su: 5 },
    }
    const res = await r.api.post(`/v1/workflows/${m.workflowId}/runs`, body, {
      key: m.key,
      idem: newIdempotencyKey('model-run'),
    })
    if (res.status === 429 || res.status === 402) {
      this.label = `refused ${res.status}`
      return
    }
    expect(res.status, res.text).toBe(202)
    const receipt = res.body as { run_id: string; status_url: string }
    expect(receipt.status_url).toBe(`/v1/runs/${receipt.run_id}`)
    const scenario = m.virtualTime ? (m.queued.shift() ?? 'succeed') : 'unknown'
    const alias = `run#${m.runs.length + 1}`
    this.label = `${alias} ${scenario}`
    m.runs.push({
      id: receipt.run_id,
      alias,
      scenario,
      publishedVersion: m.publishedVersion,
      queueSeconds: this.queueSeconds,
      runSeconds: this.runSeconds,
      acceptedAtS: m.nowS,
      seen: 'QUEUED',
      seenAtS: m.nowS,
      progressTotal: undefined,
      finalOutputs: undefined,
      cancelRequested: false,
      deleted: false,
    })
  }
  toString = () =>
    `CreateRun(${this.label || (this.scenario ?? 'default')}, queue ${this.queueSeconds}s, deadline ${this.runSeconds}s)`
}
