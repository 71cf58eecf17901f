/** Creates a Session with a queued scenario and small limits; 202 QUEUED receipt (STATE-005, SES-001). */
import { expect } from 'vitest'
import { newIdempotencyKey } from '../../../support/session-create.js'
import type { Command, Model, Real, ScenarioName } from '../world.js'

export class CreateSessionCommand implements Command {
  constructor(
    readonly scenario: ScenarioName,
    readonly queueSeconds: number,
    readonly executionSeconds: number,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    await r.control.queueScenario(m.deploymentId, this.scenario)
    m.queued.push(this.scenario)
    const idem = newIdempotencyKey('model')
    const body = {
      input: [{ type: 'TEXT', text: `model ${this.scenario}` }],
      limits: {
        queue_seconds: this.queueSeconds,
        execution_seconds: this.executionSeconds,
        max_su: 1,
      },
    }
    const res = await r.api.post(`/v1/deployments/${m.deploymentId}/sessions`, body, {
      key: m.key,
      idem,
    })
    if (res.status === 429) {
      // CONC-002: beyond the wait list; the queued scenario stays for a later create.
      expect((res.body as { error: { code: string } }).error.code).toBe('CONCURRENCY_LIMIT')
      return
    }
    expect(res.status, res.text).toBe(202)
    const receipt = res.body as {
      session_id: string
      turn_id: string
      status: string
      status_url: string
    }
    expect(receipt.status).toBe('QUEUED')
    const scenario = m.queued.shift()!
    m.receipts.push({ idem, body, receipt, atS: m.nowS })
    m.sessions.push({
      id: receipt.session_id,
      closed: false,
      deleted: false,
      turns: [
        {
          id: receipt.turn_id,
          sessionId: receipt.session_id,
          statusUrl: receipt.status_url,
          scenario,
          queueSeconds: this.queueSeconds,
          executionSeconds: this.executionSeconds,
          acceptedAtS: m.nowS,
          seen: 'QUEUED',
          seenAtS: m.nowS,
          cancelRequested: false,
          started: false,
        },
      ],
    })
  }
  toString = () =>
    `CreateSession(${this.scenario}, queue ${this.queueSeconds}s, exec ${this.executionSeconds}s)`
}
