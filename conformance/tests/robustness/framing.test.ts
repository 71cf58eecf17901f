/**
 * Hardening: malformed HTTP/1.1 framing over a raw socket (arbitraries/framing.ts: bad request lines, unknown
 * methods, headers or URLs over 16 KiB, broken chunked encoding, a Content-Length larger than the body, stray
 * bytes after a request, damaged header blocks, odd request forms). Whatever comes back is well-formed HTTP/1.1
 * (interim 1xx answers aside): each answer that is not 2xx is the error envelope with error.request_id equal to
 * X-Request-Id and Cache-Control: no-store, never a 5xx; the server keeps serving (GET /v1/deployments with the
 * full key answers 200 right after); and when nothing was accepted, nothing changed (world-state.ts, on a mock).
 */
import { Agent } from 'node:http'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { framingCases, framingExamples, type FramingCase } from '../../arbitraries/framing.js'
import { fcParams } from '../../support/fc.js'
import { exchangeBytes, parseResponses, sendRaw, toChecked } from '../../support/raw-http.js'
import { req } from '../../support/req.js'
import { sessionsPath } from '../../support/session-create.js'
import { startTarget, type Target } from '../../support/target.js'
import { checkAnswer, errorOf, is2xx, show } from './answers.js'
import { snapshot, worldWitnesses, type Snapshot } from './world-state.js'

const NUM_RUNS = 20

let target: Target
/** Keeps the state reads on a few connections. */
const reads = new Agent({ keepAlive: true, maxSockets: 8 })
beforeAll(async () => {
  target = await startTarget({ rateLimits: false })
})
afterAll(async () => {
  reads.destroy()
  await target.close()
})

it(`${req('ERR-001', 'ERR-003', 'ERR-004', 'ERR-005', 'ERR-007')} answers malformed framing, if at all, with well-formed HTTP and the envelope, changes nothing and keeps serving`, async () => {
  await target.fresh()
  const { world } = target
  const witnesses = worldWitnesses(target)
  const aim = {
    key: world.keys.full,
    // On a real deployment a request read as valid must not create billable work: an absent Deployment.
    createPath: sessionsPath(
      target.control ? world.deployments.active : '00000000-0000-4000-8000-00000000f00d',
    ),
    createBody: JSON.stringify({
      input: [{ type: 'TEXT', text: 'framing' }],
      limits: { max_su: 1 },
    }),
  }
  // Every variant once (fast-check runs examples first, within numRuns), then NUM_RUNS drawn ones.
  const examples = framingExamples(aim).map((c): [FramingCase] => [c])
  const params = fcParams<[FramingCase]>({ numRuns: NUM_RUNS })
  let before: Snapshot | undefined
  await fc.assert(
    fc.asyncProperty(framingCases(aim), async (c: FramingCase) => {
      const prior = before ?? (await snapshot(target, witnesses, reads))
      before = undefined
      const { received } = await exchangeBytes(target.baseUrl, c.chunks, {
        endAfterWrite: c.endAfterWrite,
      })
      const { responses, rest } = parseResponses(received)
      expect(
        rest.toString('latin1').slice(0, 300),
        `bytes that are no HTTP/1.1 response (after ${responses.length} response(s))`,
      ).toBe('')
      const answers = responses.filter((r) => r.status >= 200)
      for (const r of answers) {
        expect(
          r.malformedHeaders,
          `header lines that are not "name: value" (${r.statusLine})`,
        ).toEqual([])
        checkAnswer(toChecked(r.status, r.headers, r.body))
      }
      const alive = await sendRaw(target.baseUrl, {
        method: 'GET',
        target: '/v1/deployments',
        headers: { Authorization: `Bearer ${world.keys.full}` },
      })
      // A target with call-rate limits (not the in-process mock) may refuse it with RATE_LIMITED: that is serving.
      const limited = target.kind !== 'in-process' && errorOf(alive)?.code === 'RATE_LIMITED'
      expect(limited ? 200 : alive.status, `the server stopped serving: ${show(alive)}`).toBe(200)
      if (answers.some((r) => is2xx(r))) return
      const after = await snapshot(target, witnesses, reads)
      expect(
        after,
        `refused framing changed the state (answers: ${answers.map((r) => `${r.status} ${r.body.toString('utf8').slice(0, 200)}`).join(' | ') || 'none'})`,
      ).toEqual(prior)
      before = after
    }),
    { ...params, examples, numRuns: examples.length + (params.numRuns ?? NUM_RUNS) },
  )
})
