/**
 * The run's ledger served to the test files (conformance/support/pace.ts, RemoteLedger): test files run in
 * their own processes, and one pacer and one spending count must hold for all of them. Listens on 127.0.0.1
 * on a free port; the CLI passes its URL as CONFORMANCE_COORDINATOR.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { CallClass, RunLedger, SpendRequest, Started } from '../support/pace.js'

export type Coordinator = { url: string; close(): Promise<void> }

const isClass = (v: unknown): v is CallClass => v === 'accept' || v === 'read'
const text = (v: unknown): v is string => typeof v === 'string' && v.length > 0
const isStarted = (b: Record<string, unknown>): b is Started & Record<string, unknown> =>
  (b.key === undefined || typeof b.key === 'string') &&
  ((b.kind === 'run' && text(b.runId)) ||
    (b.kind === 'turn' && text(b.sessionId) && text(b.turnId)))

export async function startCoordinator(ledger: RunLedger): Promise<Coordinator> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      }
      let body: Record<string, unknown>
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>
      } catch {
        return reply(400, { error: 'not JSON' })
      }
      switch (`${req.method} ${req.url}`) {
        case 'POST /slot':
          if (!isClass(body.cls)) return reply(400, { error: 'cls' })
          return reply(200, { waitMs: ledger.slotSync(body.cls, body.wait !== false) })
        case 'POST /blocked':
          if (!isClass(body.cls) || typeof body.seconds !== 'number')
            return reply(400, { error: 'cls, seconds' })
          void ledger.blocked(body.cls, body.seconds)
          return reply(200, {})
        case 'POST /reserve':
          return reply(200, ledger.reserveSync(body as unknown as SpendRequest))
        case 'POST /settle':
          ledger.settleSync(Number(body.id), body.accepted === true)
          return reply(200, {})
        case 'POST /proxy':
          void ledger.proxyResent(Number(body.status))
          return reply(200, {})
        case 'POST /started':
          if (!isStarted(body)) return reply(400, { error: 'kind, runId or sessionId and turnId' })
          ledger.startedSync(body)
          return reply(200, {})
        case 'POST /stats':
          return reply(200, ledger.statsSync())
        default:
          return reply(404, { error: 'unknown operation' })
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
