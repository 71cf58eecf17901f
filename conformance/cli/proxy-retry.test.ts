/**
 * Retry rule 5 in the pacer (support/pace.ts): a proxy's bare 502/503/504 (no error envelope) in front of a real
 * target is sent again, the same request, with backoff, a bounded number of times, and counted; it is never a
 * verdict. A loopback server on 127.0.0.1 plays the proxy and the service; waits are recorded, not slept.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiClient } from '../support/client.js'
import { isBareProxyError, RunLedger, RunPacer } from '../support/pace.js'

type Seen = { method: string; url: string; idem: string | undefined; body: string }
type Answer = { status: number; headers?: Record<string, string>; body?: string }

let server: Server | undefined
afterEach(async () => {
  const s = server
  server = undefined
  if (!s) return
  s.closeAllConnections()
  await new Promise((resolve) => s.close(resolve))
})

/** A loopback server giving the answers in order (the last one again when they run out). */
async function serveAnswers(answers: Answer[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        idem: req.headers['idempotency-key'] as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
      })
      const a = answers.length > 1 ? answers.shift()! : answers[0]!
      res.writeHead(a.status, a.headers ?? {})
      res.end(a.body ?? '')
    })
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen }
}

const bare502: Answer = {
  status: 502,
  headers: { 'content-type': 'text/html' },
  body: '<html><body>502 Bad Gateway</body></html>',
}

/** The service's own answer: documented headers, JSON body. */
const served = (status: number, body: unknown): Answer => ({
  status,
  headers: {
    'content-type': 'application/json',
    'x-request-id': randomUUID(),
    'cache-control': 'no-store',
  },
  body: JSON.stringify(body),
})

const client = (url: string, ledger: RunLedger, waits: number[], extra = {}) =>
  new ApiClient(
    url,
    new RunPacer(ledger, { spend: true, ...extra }, async (ms) => {
      waits.push(ms)
    }),
  )

describe("a proxy's bare 502/503/504 (retry rule 5)", () => {
  it('sends the same request again (same Idempotency-Key and body) after a bare 502 and returns the 202', async () => {
    const runId = randomUUID()
    const receipt = {
      run_id: runId,
      status_url: `/v1/runs/${runId}`,
      events_url: `/v1/runs/${runId}/events`,
      idempotency_expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    }
    const { url, seen } = await serveAnswers([bare502, served(202, receipt)])
    const ledger = new RunLedger({ allow: true, maxExecutions: 1 })
    const waits: number[] = []
    const body = { published_version: 1, input: { q: 'x' } }
    const res = await client(url, ledger, waits).post(`/v1/workflows/${randomUUID()}/runs`, body, {
      key: 'sk_test',
      idem: 'run-key-1',
    })
    expect(res.status).toBe(202)
    expect(seen).toHaveLength(2)
    expect(seen[1]).toEqual(seen[0])
    expect(seen[0]!.idem).toBe('run-key-1')
    expect(JSON.parse(seen[0]!.body)).toEqual(body)
    // A backoff before the resend; the resend is counted, the execution once, and the Run is known.
    expect(waits.some((ms) => ms > 0)).toBe(true)
    const stats = ledger.statsSync()
    expect(stats.proxyResent).toBe(1)
    expect(stats.executions).toBe(1)
    expect(ledger.startedExecutions()).toEqual([{ kind: 'run', runId, key: 'sk_test' }])
  })

  it("honours a bare 503's Retry-After and retries a bare 504 the same way", async () => {
    const { url, seen } = await serveAnswers([
      { status: 503, headers: { 'retry-after': '3' }, body: 'Service Unavailable' },
      { status: 504, body: '' },
      served(200, { items: [] }),
    ])
    const ledger = new RunLedger({ allow: false, maxExecutions: 1 })
    const waits: number[] = []
    const res = await client(url, ledger, waits).get('/v1/deployments', {
      key: 'sk_test',
      check: false,
    })
    expect(res.status).toBe(200)
    expect(seen).toHaveLength(3)
    expect(waits).toContain(3000)
    expect(ledger.statsSync().proxyResent).toBe(2)
  })

  it('stops after a bounded number of resends and gives no verdict (the test would be skipped)', async () => {
    const { url, seen } = await serveAnswers([bare502])
    const ledger = new RunLedger({ allow: false, maxExecutions: 1 })
    const api = client(url, ledger, [], {
      maxProxyResends: 2,
      unavailable: (reason: string) => {
        throw new Error(`no verdict: ${reason}`)
      },
    })
    await expect(api.get('/v1/deployments', { key: 'sk_test' })).rejects.toThrow(
      /no verdict: a proxy answered GET \/v1\/deployments with a bare 502 .* 3 times in a row/,
    )
    expect(seen).toHaveLength(3)
    expect(ledger.statsSync().proxyResent).toBe(2)
  })

  it("returns the service's own 503 with the envelope as it is", async () => {
    const envelope = {
      error: {
        code: 'SESSION_UPDATING',
        message: 'busy',
        retryable: true,
        request_id: randomUUID(),
        details: {},
      },
    }
    const { url, seen } = await serveAnswers([served(503, envelope), served(200, { items: [] })])
    const ledger = new RunLedger({ allow: false, maxExecutions: 1 })
    const res = await client(url, ledger, []).get('/v1/deployments', {
      key: 'sk_test',
      check: false,
    })
    expect(res.status).toBe(503)
    expect(seen).toHaveLength(1)
    expect(ledger.statsSync().proxyResent).toBe(0)
  })

  it('tells a bare proxy answer from an error envelope', () => {
    expect(isBareProxyError({ status: 502, body: '<html>' })).toBe(true)
    expect(isBareProxyError({ status: 504, body: undefined })).toBe(true)
    expect(isBareProxyError({ status: 503, body: { error: { code: 'SOURCE_UNAVAILABLE' } } })).toBe(
      false,
    )
    expect(isBareProxyError({ status: 500, body: '' })).toBe(false)
    expect(isBareProxyError({ status: 429, body: '' })).toBe(false)
  })
})
