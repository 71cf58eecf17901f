/**
 * The executions a run on a real target started are ended at its end and on abort (cleanup.ts): Runs are
 * canceled (POST /v1/runs/{id}/cancel, Idempotency-Key, `{}`), Sessions with a Turn that has not ended are
 * deleted (DELETE /v1/sessions/{id}, Idempotency-Key, `{}`), the others kept. A loopback fake on 127.0.0.1
 * answers; waits are recorded, not slept.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { RunLedger } from '../support/pace.js'
import { cancelStarted, cleanupLine } from './cleanup.js'

type Seen = { method: string; url: string; key?: string; idem?: string; body: string }
type Handler = (req: Seen) => { status: number; body?: unknown; headers?: Record<string, string> }

let server: Server | undefined
afterEach(async () => {
  const s = server
  server = undefined
  if (!s) return
  s.closeAllConnections()
  await new Promise((resolve) => s.close(resolve))
})

async function fake(handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
      }
      const auth = req.headers.authorization
      if (auth) s.key = auth.replace(/^Bearer /, '')
      const idem = req.headers['idempotency-key']
      if (typeof idem === 'string') s.idem = idem
      seen.push(s)
      const a = handler(s)
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers })
      res.end(a.body === undefined ? '' : JSON.stringify(a.body))
    })
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen }
}

const error = (code: string) => ({ error: { code, message: code, retryable: false, details: {} } })

describe('ending the executions a run started', () => {
  it('cancels the Runs and deletes only the Sessions whose Turn has not ended', async () => {
    const { url, seen } = await fake((r) => {
      if (r.url === '/v1/runs/r-running/cancel') return { status: 202, body: {} }
      if (r.url === '/v1/runs/r-ended/cancel') return { status: 200, body: {} }
      if (r.url === '/v1/runs/r-deleted/cancel') return { status: 404, body: error('NOT_FOUND') }
      if (r.url === '/v1/sessions/s-running/turns/t1')
        return { status: 200, body: { status: 'SUCCEEDED' } }
      if (r.url === '/v1/sessions/s-running/turns/t2')
        return { status: 200, body: { status: 'RUNNING' } }
      if (r.url === '/v1/sessions/s-ended/turns/t3')
        return { status: 200, body: { status: 'FAILED' } }
      if (r.method === 'DELETE' && r.url === '/v1/sessions/s-running')
        return { status: 202, body: {} }
      return { status: 500, body: error('INTERNAL') }
    })
    const ledger = new RunLedger({ allow: true, maxExecutions: 10 })
    ledger.startedSync({ kind: 'run', runId: 'r-running', key: 'k-run' })
    ledger.startedSync({ kind: 'run', runId: 'r-ended' })
    ledger.startedSync({ kind: 'run', runId: 'r-deleted' })
    ledger.startedSync({ kind: 'turn', sessionId: 's-running', turnId: 't1' })
    ledger.startedSync({ kind: 'turn', sessionId: 's-running', turnId: 't2' })
    ledger.startedSync({ kind: 'turn', sessionId: 's-ended', turnId: 't3' })
    const report = await cancelStarted({
      baseUrl: url,
      ledger,
      fallbackKey: 'k-full',
      wait: async () => {},
    })
    expect(report).toEqual({
      runsCanceled: ['r-running'],
      sessionsDeleted: ['s-running'],
      ended: 2,
      gone: 1,
      failed: [],
    })
    const cancel = seen.find((s) => s.url === '/v1/runs/r-running/cancel')!
    expect(cancel).toMatchObject({ method: 'POST', key: 'k-run', body: '{}' })
    expect(cancel.idem).toMatch(/\S/)
    // A Run whose key is unknown is canceled with the world's full key.
    expect(seen.find((s) => s.url === '/v1/runs/r-ended/cancel')?.key).toBe('k-full')
    const deletes = seen.filter((s) => s.method === 'DELETE')
    expect(deletes).toHaveLength(1)
    expect(deletes[0]).toMatchObject({ url: '/v1/sessions/s-running', body: '{}' })
    expect(deletes[0]!.idem).toMatch(/\S/)
    // Every request took a Read slot of the run's ledger.
    expect(ledger.statsSync().calls).toEqual({ accept: 0, read: seen.length })
    expect(cleanupLine(report)).toBe(
      'cleanup: 1 Runs canceled, 1 Sessions with a running Turn deleted, 2 executions had ended, 1 were gone',
    )
  })

  it("sends the same cancel again after a 429 or a proxy's bare 502, and tries the full key when the Run's key is refused", async () => {
    let calls = 0
    const { url, seen } = await fake((r): ReturnType<Handler> => {
      calls++
      if (calls === 1)
        return { status: 429, body: error('RATE_LIMITED'), headers: { 'retry-after': '2' } }
      if (calls === 2) return { status: 502, headers: { 'content-type': 'text/html' } }
      if (r.key === 'k-read') return { status: 403, body: error('INSUFFICIENT_SCOPE') }
      return { status: 202, body: {} }
    })
    const ledger = new RunLedger({ allow: true, maxExecutions: 10 })
    ledger.startedSync({ kind: 'run', runId: 'r1', key: 'k-read' })
    const waits: number[] = []
    const report = await cancelStarted({
      baseUrl: url,
      ledger,
      fallbackKey: 'k-full',
      wait: async (ms) => {
        waits.push(ms)
      },
    })
    expect(report.runsCanceled).toEqual(['r1'])
    expect(seen.map((s) => s.key)).toEqual(['k-read', 'k-read', 'k-read', 'k-full'])
    expect(new Set(seen.map((s) => s.idem)).size).toBe(1)
    expect(waits).toContain(2000)
  })

  it('reports what it could not end', async () => {
    const { url } = await fake(() => ({ status: 500, body: error('INTERNAL') }))
    const ledger = new RunLedger({ allow: true, maxExecutions: 10 })
    ledger.startedSync({ kind: 'run', runId: 'r1', key: 'k' })
    ledger.startedSync({ kind: 'turn', sessionId: 's1', turnId: 't1', key: 'k' })
    const report = await cancelStarted({ baseUrl: url, ledger, wait: async () => {} })
    expect(report.failed).toEqual([
      'Run r1: POST /v1/runs/r1/cancel answered 500 INTERNAL',
      'Session s1: a Turn read answered 500 INTERNAL',
    ])
    expect(cleanupLine(report)).toMatch(/, 2 could not be ended$/)
  })
})
