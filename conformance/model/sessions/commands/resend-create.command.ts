/** Resends an earlier create with its Idempotency-Key and body: the same receipt, no new Session (IDEM-001). */
import { expect } from 'vitest'
import { pick, type Command, type Model, type Real } from '../world.js'

export class ResendCreateCommand implements Command {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.receipts.length > 0
  async run(m: Model, r: Real) {
    const sent = pick(m.receipts, this.i)
    // RET-001: receipts are kept at least 24 hours; the model resends only within that time.
    if (m.nowS - sent.atS >= 24 * 3600) return
    const res = await r.api.post(`/v1/deployments/${m.deploymentId}/sessions`, sent.body, {
      key: m.key,
      idem: sent.idem,
    })
    expect(res.status, res.text).toBe(202)
    expect(res.body).toEqual(sent.receipt)
  }
  toString = () => `ResendCreate(#${this.i})`
}
