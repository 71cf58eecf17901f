/**
 * Webhook notifications as a target really sends them, received by the suite's own receiver on 127.0.0.1:
 * the Service-Signature header, the HMAC over the raw bytes, the 300-second window, the body's size and fields
 * (support/webhook-checks.ts), and a retry after a 500 answer (same event_id and bytes, fresh timestamp and
 * signature, 1 minute after the first attempt).
 *
 * On a real target the receiver is reached through TARGET_WEBHOOK_URL (the CLI's --webhook-url: a public
 * HTTPS address the CI forwards, with every path under it, to 127.0.0.1:TARGET_WEBHOOK_PORT, default 4099);
 * the test needs the owner login token and spending (it starts one Session per test through target.api, so
 * the run's pacer and budget gate it), waits for the deliveries in wall time (the retry: up to 3.5 minutes),
 * and deletes the endpoint it registered at its end (deleteWebhookEndpoint is an assumed path: a refusal is a
 * warning naming the endpoint left behind). On a mock (in process or over HTTP) the same tests register the
 * receiver's own loopback address (useTarget allowInsecureWebhooks) and move virtual time, so they run in
 * `npm test`.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it, type TestContext } from 'vitest'
import { DEFAULT_WEBHOOK_PORT } from '../../cli/args.js'
import { assertsMockChoices, mockChoice } from '../../support/assertions.js'
import { spendPolicyFromEnv } from '../../support/pace.js'
import { req } from '../../support/req.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { loopbackReceiver, role } from '../../support/skip.js'
import { isStrict, targetKindFromEnv } from '../../support/strictness.js'
import { Deduplicator, verifySignature } from '../../support/target.js'
import { useTarget } from '../../support/use-target.js'
import { warn } from '../../support/warnings.js'
import {
  checkBody,
  checkRetry,
  checkSignature,
  parseSignatureHeader,
} from '../../support/webhook-checks.js'

const target = useTarget({ allowInsecureWebhooks: true })

export const NEEDS_WEBHOOK_URL =
  "needs --webhook-url: a public HTTPS address forwarded to the suite's receiver on 127.0.0.1"

const REAL = targetKindFromEnv() === 'real'
/** On a real target a Turn runs in wall time and the retry comes a minute after the first attempt. */
const TIMEOUT_MS = REAL ? 15 * 60_000 : 60_000
/** How long a first delivery may take: the Turn's run time on a real target; the mock's send on a mock. */
const FIRST_WAIT_MS = REAL ? 10 * 60_000 : 10_000
/** The retry is due 1 minute after the first attempt; a real target gets 3.5 minutes of wall time. */
const RETRY_WAIT_MS = REAL ? 210_000 : 10_000

type Received = {
  path: string
  headers: IncomingMessage['headers']
  raw: Buffer
  json: Record<string, unknown> | undefined
  /** The receiver's wall clock when the request had arrived. */
  receivedAtMs: number
  /** What the receiver answered. */
  answered: number
}

/** Answers a request: the status to send (the request is recorded first). */
type Answer = (d: Omit<Received, 'answered'>, all: readonly Received[]) => number

/**
 * The receiver: on 127.0.0.1 at TARGET_WEBHOOK_PORT (the CLI's --webhook-port; default 4099 with a webhook
 * URL, a free port without), recording every request byte for byte. It answers 204 unless told otherwise.
 */
class Receiver {
  readonly received: Received[] = []
  answer: Answer = () => 204
  baseUrl = ''
  private server: Server | undefined

  async start(): Promise<void> {
    if (this.server) return
    const env = process.env
    const port = env.TARGET_WEBHOOK_PORT
      ? Number(env.TARGET_WEBHOOK_PORT)
      : env.TARGET_WEBHOOK_URL
        ? DEFAULT_WEBHOOK_PORT
        : 0
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks)
        let json: Record<string, unknown> | undefined
        try {
          json = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
        } catch {
          json = undefined
        }
        const d = {
          path: req.url ?? '',
          headers: req.headers,
          raw,
          json,
          receivedAtMs: Date.now(),
        }
        let status = 500
        try {
          status = this.answer(d, this.received)
        } finally {
          this.received.push({ ...d, answered: status })
          res.writeHead(status).end()
        }
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(
          new Error(
            `the webhook receiver cannot listen on 127.0.0.1:${port} (--webhook-port): ${error.message}`,
          ),
        ),
      )
      server.listen(port, '127.0.0.1', resolve)
    })
    this.server = server
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** The first request that `match` accepts; fails after timeoutMs of wall time. */
  async waitFor(match: (d: Received) => boolean, timeoutMs: number, what: string) {
    const deadline = performance.now() + timeoutMs
    for (;;) {
      const found = this.received.find(match)
      if (found) return found
      if (performance.now() > deadline)
        throw new Error(
          `no ${what} within ${Math.round(timeoutMs / 1000)} s (the receiver got ${this.received.length} requests: ${this.received.map((d) => d.path).join(', ') || 'none'})`,
        )
      await new Promise((resolve) => setTimeout(resolve, REAL ? 250 : 10))
    }
  }

  async close(): Promise<void> {
    const server = this.server
    if (!server) return
    this.server = undefined
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const receiver = new Receiver()
afterAll(async () => {
  await receiver.close()
})

const base = () => `/api/runtime/projects/${target.world.projectId}`
const MARKER = `confidential-input-${randomUUID()}`

/** The secret of a registration's answer (its field name is not shown: `secret`, or a field naming it). */
function secretOf(body: unknown): string | undefined {
  const record = (body ?? {}) as Record<string, unknown>
  if (typeof record.secret === 'string' && record.secret.length > 0) return record.secret
  for (const [name, value] of Object.entries(record))
    if (/secret/i.test(name) && !/expires|_at$/i.test(name) && typeof value === 'string' && value)
      return value
  return undefined
}

const endpointIdOf = (body: unknown): string | undefined => {
  const record = (body ?? {}) as Record<string, unknown>
  const id = record.id ?? record.endpoint_id
  return typeof id === 'string' ? id : undefined
}

type Setup = { owner: string; url: string; token: string; secret: string }

/**
 * What each test needs: the owner token; on a real target the webhook URL and spending, on a mock a target
 * that delivers to loopback; then the receiver and a registered endpoint at a path of its own (so a request of
 * another endpoint, one an earlier run left behind, is never taken for this one's), deleted at the test's end.
 */
async function setUp(ctx: TestContext): Promise<Setup> {
  const owner = role(ctx, target.world.ownerToken, 'owner login token')
  let address: string
  if (target.kind === 'real') {
    const given = process.env.TARGET_WEBHOOK_URL
    if (!given) ctx.skip(NEEDS_WEBHOOK_URL)
    // Checked before registering: without spending no execution could send a notice.
    if (!spendPolicyFromEnv().allow) ctx.skip('needs --allow-spend')
    await receiver.start()
    address = given.replace(/\/+$/, '')
  } else {
    loopbackReceiver(ctx, target)
    await receiver.start()
    address = receiver.baseUrl
  }
  const token = randomUUID()
  const url = `${address}/conformance/${token}`
  const res = await target.api.post(`${base()}/webhooks`, { url }, { key: owner })
  if (!assertsMockChoices(target) && res.status >= 400 && res.status < 500)
    ctx.skip(
      `the target refused to register ${url} (${res.status}): the Project may hold its 10 endpoints that are not deleted`,
    )
  expect(res.status, res.text).toBeGreaterThanOrEqual(200)
  expect(res.status, res.text).toBeLessThan(300)
  await mockChoice(target, 'x-assumed: a registration answers 201', () => {
    expect(res.status, res.text).toBe(201)
  })
  const id = endpointIdOf(res.body)
  if (id !== undefined) ctx.onTestFinished(() => forget(owner, id, url))
  else warn('webhook endpoint id', `the registration of ${url} shows no id: it cannot be deleted`)
  const secret = secretOf(res.body)
  expect(secret, `WHM-002: the registration returns the secret: ${res.text}`).toBeDefined()
  return { owner, url, token, secret: secret! }
}

/**
 * Deletes the endpoint (x-assumed DELETE .../webhooks/{endpoint_id}): on a mock it must work; on a real target
 * a refusal is a warning naming the endpoint, which then stays (at most 10 per Project).
 */
async function forget(owner: string, id: string, url: string): Promise<void> {
  const res = await target.api.delete(`${base()}/webhooks/${id}`, undefined, {
    key: owner,
    check: assertsMockChoices(target),
  })
  if (assertsMockChoices(target)) expect(res.status, res.text).toBe(200)
  else if (res.status < 200 || res.status >= 300)
    warn(
      `webhook endpoint left: ${id}`,
      `the endpoint ${id} (${url}) was not deleted: DELETE ${base()}/webhooks/${id} (an assumed path) answered ${res.status}; delete it in the web application (a Project holds at most 10)`,
    )
}

async function startTurn(): Promise<SessionReceipt> {
  const res = await createSession(target, {
    input: [{ type: 'TEXT', text: `Summarize ${MARKER}` }],
  })
  expect(res.status, res.text).toBe(202)
  return res.body as SessionReceipt
}

/** The receiver's clock when d arrived: wall time on a real target, the mock's virtual clock on a mock. */
async function receiverNowS(d: Received): Promise<number> {
  if (!target.control) return Math.floor(d.receivedAtMs / 1000)
  return Math.floor(Date.parse((await target.control.clock()).now) / 1000)
}

/** A request of this test's endpoint about its Turn. */
const ofTurn = (s: Setup, receipt: SessionReceipt) => (d: Received) =>
  d.path.includes(s.token) && d.json?.turn_id === receipt.turn_id

/** The first notice of the Turn: on a mock after the default scenario's run in virtual time. */
async function firstNotice(s: Setup, receipt: SessionReceipt): Promise<Received> {
  if (target.control) await target.control.advance(10)
  return receiver.waitFor(ofTurn(s, receipt), FIRST_WAIT_MS, `notice of Turn ${receipt.turn_id}`)
}

const signatureT = (d: Received): number => {
  const parsed = parseSignatureHeader(d.headers['service-signature'])
  return parsed.ok ? parsed.signature.t : Number.NaN
}

/** Rules 2-4 on one request as received. */
async function expectSigned(d: Received, secret: string): Promise<void> {
  const header = d.headers['service-signature']
  const nowS = await receiverNowS(d)
  expect(checkSignature({ header, raw: d.raw, secrets: [secret], nowS }).problems).toEqual([])
  // The receiver kit that integrators use agrees.
  expect(
    verifySignature({ header: header as string, rawBody: d.raw, secrets: [secret], nowS }).ok,
  ).toBe(true)
}

describe('webhook deliveries of the target, received by the suite', () => {
  it(
    `${req('WHN-001', 'WHN-002', 'WHN-003', 'WHN-004', 'WHN-006', 'WHN-007', 'WHN-008', 'WHN-009', 'WHM-006', 'AUTH-012')} a delivery is signed over its raw bytes within 300 s, at most 4 KiB, with the documented fields and no raw input`,
    { timeout: TIMEOUT_MS },
    async (ctx) => {
      const s = await setUp(ctx)
      const receipt = await startTurn()
      const d = await firstNotice(s, receipt)
      expect(d.headers.authorization).toBeUndefined()
      await expectSigned(d, s.secret)
      const verdict = checkBody(d.raw, { forbidden: [MARKER] })
      expect(verdict.problems).toEqual([])
      if (verdict.extraFields.length > 0) {
        const message = `a notification holds fields the document's table does not name: ${verdict.extraFields.join(', ')}`
        if (isStrict()) expect.fail(message)
        warn(`webhook fields: ${verdict.extraFields.join(',')}`, message)
      }
      const body = verdict.body!
      expect(body).toMatchObject({ session_id: receipt.session_id, turn_id: receipt.turn_id })
      await mockChoice(target, "the mock's default scenario: turn.completed, SUCCEEDED", () => {
        expect(body).toMatchObject({ type: 'turn.completed', status: 'SUCCEEDED' })
      })
      expect(new Deduplicator().seen(String(body.event_id), d.raw)).toBe('new')
      // WHN-006: relative paths that need authentication, against the configured base address.
      for (const field of ['status_url', 'outputs_url']) {
        const path = String(body[field])
        expect((await target.api.get(path, { check: false })).status, field).toBe(401)
        const read = await target.api.get(path, { key: target.world.keys.full })
        expect(read.status, `${field} ${path}: ${read.text}`).toBe(200)
      }
      if (body.type === 'turn.completed' || body.type === 'turn.failed') {
        const turn = await target.api.get(String(body.status_url), { key: target.world.keys.full })
        expect((turn.body as { status?: unknown }).status).toBe(body.status)
      }
    },
  )

  it(
    `${req('WHN-021', 'WHN-005', 'WHN-012')} a delivery answered 500 is sent again 1 minute after the first attempt: the same event_id and bytes, a fresh timestamp and signature`,
    { timeout: TIMEOUT_MS },
    async (ctx) => {
      const s = await setUp(ctx)
      // The first attempt of each event at this endpoint is answered 500, every later one 204.
      receiver.answer = (d, all) =>
        d.path.includes(s.token) &&
        !all.some((x) => x.path.includes(s.token) && x.json?.event_id === d.json?.event_id)
          ? 500
          : 204
      ctx.onTestFinished(() => {
        receiver.answer = () => 204
      })
      const receipt = await startTurn()
      const first = await firstNotice(s, receipt)
      expect(first.answered).toBe(500)
      const again = (d: Received) =>
        d !== first && ofTurn(s, receipt)(d) && d.json?.event_id === first.json?.event_id
      const t1 = signatureT(first)
      if (target.control) {
        // Nothing before the due second, the retry at it (virtual time).
        const nowS = await receiverNowS(first)
        await target.control.advance(t1 + 59 - nowS)
        await new Promise((resolve) => setTimeout(resolve, 50))
        expect(receiver.received.filter(again), 'a retry before 1 minute').toEqual([])
        await target.control.advance(1)
      }
      const retry = await receiver.waitFor(again, RETRY_WAIT_MS, 'retry of the answered-500 notice')
      expect(retry.answered).toBe(204)
      await expectSigned(first, s.secret)
      await expectSigned(retry, s.secret)
      const toReceived = (d: Received) => ({ header: d.headers['service-signature'], raw: d.raw })
      expect(checkRetry(toReceived(first), toReceived(retry))).toEqual([])
      const delay = signatureT(retry) - t1
      if (target.control) expect(delay).toBe(60)
      else
        expect(delay, 'the retry is due 1 minute after the first attempt').toBeGreaterThanOrEqual(
          59,
        )
      // A receiver's deduplication sees a duplicate (answered 2xx), not a conflict.
      const dedup = new Deduplicator()
      expect(dedup.seen(String(first.json!.event_id), first.raw)).toBe('new')
      expect(dedup.seen(String(retry.json!.event_id), retry.raw)).toBe('duplicate')
    },
  )
})
