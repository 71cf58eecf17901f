/**
 * Hardening: every operation of spec/openapi.yaml (iterated from the operation table, none named here) gets
 * fuzzed requests (arbitraries/requests.ts: ids of existing resources or junk in the path, query values valid or
 * not, good and broken Authorization, Idempotency-Key, X-Correlation-Id, Last-Event-ID, Content-Type and
 * Content-Encoding, bodies from the operation's schema and their mutations). Every answer
 *   - passes the suite's response checks (status documented, schema, envelope, X-Request-Id, no-store, no 5xx),
 *   - is 2xx, or the error envelope with error.request_id equal to X-Request-Id and Cache-Control: no-store,
 *   - when refused (non-2xx), changed nothing observable (world-state.ts) and, when not retryable, is refused
 *     the same way when sent again unchanged.
 * Bounded: FC_NUM_RUNS runs per operation (default 10) within FUZZ_BUDGET_MS for the whole file (default
 * 25 s, shared among the operations left, at least 1 s each; a failure gets 8 s more to shrink); FC_SEED /
 * FC_PATH replay a failure (fast-check prints both). Each operation starts from a fresh world with its witnesses on a mock (call-rate limits off, so
 * 429s do not hide the rest; start a mock used through TARGET_URL with --no-rate-limits); on a real target only
 * the read operations run, against the world file's ids, without the state check.
 */
import { Agent } from 'node:http'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestArb, fuzzOperations, type FuzzRequest } from '../../arbitraries/requests.js'
import { fcParams } from '../../support/fc.js'
import { sendRaw, type RawResponse } from '../../support/raw-http.js'
import { req } from '../../support/req.js'
import { startTarget, type Target } from '../../support/target.js'
import { ALLOWED_TYPES, sample } from '../../support/uploads.js'
import { checkAnswer, errorOf, is2xx, show } from './answers.js'
import { makeWitnesses, snapshot, worldWitnesses, type Snapshot } from './world-state.js'

const operations = fuzzOperations()
const NUM_RUNS = 10
/** Wall-clock budget of the whole file; each operation gets an equal share of what is left (at least MIN_MS). */
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 25_000)
const MIN_MS = 1000
/** Below the project's 60 s test timeout, with room for the world's setup and shrinking. */
const MAX_MS = 40_000
/** Time to shrink a failure, on top of the operation's share. */
const SHRINK_MS = 8000

const uploads = ALLOWED_TYPES.map((t) => ({ ext: t.ext, mime: t.mime, content: sample(t.sample) }))

let target: Target
/** Keeps the state reads on a few connections. */
const reads = new Agent({ keepAlive: true, maxSockets: 8 })
let deadline = 0
let left = operations.length
beforeAll(async () => {
  target = await startTarget({ rateLimits: false })
  deadline = Date.now() + BUDGET_MS
})
afterAll(async () => {
  reads.destroy()
  await target.close()
})

async function send(r: FuzzRequest): Promise<RawResponse> {
  try {
    return await sendRaw(target.baseUrl, r)
  } catch (error) {
    throw new Error(`no answer: ${(error as Error).message}`, { cause: error })
  }
}

// fast-check types its plugins as Plugin<unknown>; the plugin is generic in fact.
const interrupt = <T>(ms: number) => fc.interruptAfterTimeLimit(ms) as fc.Plugin<T>

/**
 * fc.assert within a time limit for the runs (stopping early counts as passing), and SHRINK_MS more to shrink
 * a failure: the failure is replayed from its seed and path, so the report is fast-check's own (seed, path,
 * shrunk counterexample).
 */
async function assertWithin<T>(
  ms: number,
  property: fc.IAsyncProperty<T>,
  params: fc.Parameters<T>,
): Promise<void> {
  let first = await fc.check(property, { ...params, plugins: [interrupt<T>(ms)] })
  // A slow machine may use the whole share before one run ends: one run without the limit, then.
  if (first.interrupted && first.numRuns === 0)
    first = await fc.check(property, { ...params, numRuns: 1 })
  if (!first.failed) return
  if (first.counterexamplePath !== null) {
    await fc.assert(property, {
      ...params,
      seed: first.seed,
      path: first.counterexamplePath,
      plugins: [interrupt<T>(SHRINK_MS)],
    })
  }
  // Reached only when the failure did not happen again on replay (or no run finished in time).
  throw new Error(fc.defaultReportMessage(first) ?? 'property failed')
}

describe('fuzzed requests to every operation', () => {
  for (const op of operations) {
    it(`${req('ERR-001', 'ERR-003', 'ERR-004', 'ERR-005', 'ERR-007', 'RETRY-005')} ${op.operationId} (${op.method} ${op.template}) answers fuzzed requests without a 5xx, refuses with the envelope and a refusal changes nothing`, async (ctx) => {
      const share = Math.min(MAX_MS, Math.max(MIN_MS, (deadline - Date.now()) / left--))
      if (!target.control && op.method !== 'GET')
        ctx.skip('real target: fuzzing a write may create billable work; mock only')
      await target.fresh()
      const witnesses = target.control ? await makeWitnesses(target) : worldWitnesses(target)
      const fuzz = { world: target.world, witnesses, uploads }
      let before: Snapshot | undefined = await snapshot(target, witnesses, reads)
      await assertWithin(
        share,
        fc.asyncProperty(requestArb(op, fuzz), async (r) => {
          // Taken again after any answer that was not a checked refusal (a 2xx, a failure).
          const prior = before ?? (await snapshot(target, witnesses, reads))
          before = undefined
          const res = await send(r)
          checkAnswer(res, r.method, r.target)
          if (is2xx(res)) return
          const again = errorOf(res)?.retryable === false ? await send(r) : undefined
          // A call-rate refusal of the resend (a real target) is another rule's business.
          if (again && again.status !== 429) {
            checkAnswer(again, r.method, r.target)
            expect(
              `${again.status} ${String(errorOf(again)?.code)}`,
              `an unchanged resend of a refused request: ${show(again)}`,
            ).toBe(`${res.status} ${String(errorOf(res)?.code)}`)
          }
          const after = await snapshot(target, witnesses, reads)
          expect(after, `a refused request (${show(res)}) changed the state`).toEqual(prior)
          before = after
        }),
        fcParams<[FuzzRequest]>({ numRuns: NUM_RUNS }),
      )
    })
  }
})
