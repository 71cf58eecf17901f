/**
 * Kept-alive connections to webhook receivers (connections.ts, sender.ts): the attempts of a delivery share
 * one connection, and a receiver closing a kept-alive connection as it is reused never turns into a failed
 * attempt (the retry schedule and outcomes of WHN-021 stay exact). Counts only: connections opened and
 * requests received, never a timing.
 */
import { getEventListeners, setMaxListeners } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { appendTurnOutcome, managedProject } from '../events/test-events.js'
import { WebhookConnections } from './connections.js'
import { MAX_ATTEMPTS } from './delivery.js'
import { sendNotification } from './sender.js'

/** How a receiver treats a request, given how many requests its connection carried before it. */
type Behaviour = (req: IncomingMessage, res: ServerResponse, before: number) => void

/** A receiver on 127.0.0.1 counting the connections it accepted and the requests it read. */
class CountingReceiver {
  connections = 0
  requests = 0
  url = ''
  private server!: Server
  constructor(private readonly behaviour: Behaviour) {}
  async start(): Promise<void> {
    const carried = new WeakMap<Socket, number>()
    this.server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        this.requests++
        const before = carried.get(req.socket) ?? 0
        carried.set(req.socket, before + 1)
        this.behaviour(req, res, before)
      })
    })
    // No Keep-Alive timeout announced: the sender cannot tell when the receiver will close an idle connection.
    this.server.keepAliveTimeout = 0
    this.server.on('connection', () => this.connections++)
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }
  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

const open: (Mock | CountingReceiver)[] = []
afterEach(async () => {
  while (open.length) await open.pop()!.close()
})

/** A mock with one endpoint at a receiver behaving so; `deliver` sends `n` events through every attempt. */
async function deliverThrough(behaviour: Behaviour, n = 1) {
  const receiver = new CountingReceiver(behaviour)
  await receiver.start()
  open.push(receiver)
  const mock = await createMock({ allowInsecureWebhooks: true })
  open.push(mock)
  const { project, manage } = managedProject(mock)
  expect((await manage('POST', '/webhooks', { url: receiver.url })).status).toBe(201)
  for (let i = 0; i < n; i++) {
    appendTurnOutcome(mock, project.id, 'FAILED')
  }
  // Past the last retry (24 h after the first attempt) and its outcome.
  await mock.clock.advance(25 * 3600)
  await mock.webhooks.idle()
  const page = (await (await manage('GET', '/webhook-deliveries?limit=100')).json()) as {
    items: { status: string; attempts: number; history: { error_code: string | null }[] }[]
  }
  return { receiver, deliveries: page.items }
}

/** Every delivery FAILED after its 7 attempts, each answered 500 (HTTP_STATUS), none a connection error. */
function expectAnswered500(deliveries: Awaited<ReturnType<typeof deliverThrough>>['deliveries']) {
  for (const d of deliveries) {
    expect(d).toMatchObject({ status: 'FAILED', attempts: MAX_ATTEMPTS })
    expect(d.history.map((h) => h.error_code)).toEqual(Array(MAX_ATTEMPTS).fill('HTTP_STATUS'))
  }
}

describe('kept-alive webhook connections', () => {
  it('[WHN-021] sends the 7 attempts of a delivery over one kept-alive connection', async () => {
    const { receiver, deliveries } = await deliverThrough((_req, res) => res.writeHead(500).end())
    expect(deliveries).toHaveLength(1)
    expectAnswered500(deliveries)
    expect(receiver.requests).toBe(MAX_ATTEMPTS)
    expect(receiver.connections).toBe(1)
  })

  it('[WHN-021] a kept-alive connection the receiver closes as it is reused is not a failed attempt: the request goes again on a fresh connection', async () => {
    // The receiver drops a kept-alive connection when a second request arrives on it, before answering a
    // byte: what a sender sees when the receiver closed the idle connection just as the request went out.
    const { receiver, deliveries } = await deliverThrough((req, res, before) => {
      if (before > 0) req.socket.destroy()
      else res.writeHead(500).end()
    })
    expectAnswered500(deliveries)
    // Attempts 1, 3, 5, 7 open a kept-alive connection; 2, 4, 6 reuse it, lose it, and go once more on a
    // fresh connection of their own.
    expect(receiver.requests).toBe(MAX_ATTEMPTS + 3)
    expect(receiver.connections).toBe(MAX_ATTEMPTS)
  })

  it('[WHN-021] a receiver closing every connection right after its answer never causes a CONNECTION_ERROR', async () => {
    // The close races the next send: it either reaches the sender first (the connection leaves the pool) or
    // the send picks the closed connection and goes again on a fresh one. Neither is a failed attempt.
    const { receiver, deliveries } = await deliverThrough((req, res) => {
      res.writeHead(500).end(() => req.socket.end())
    }, 5)
    expect(deliveries).toHaveLength(5)
    expectAnswered500(deliveries)
    expect(receiver.requests).toBeGreaterThanOrEqual(5 * MAX_ATTEMPTS)
  })

  it('[WHN-021] retries a failed kept-alive connection only when no byte of an answer came back, and only once', async () => {
    // A reused connection cut after part of an answer: the receiver read the request, so it is not sent
    // again; the attempt is a CONNECTION_ERROR. A fresh connection cut before any answer is not retried either.
    const { receiver, deliveries } = await deliverThrough((req, res, before) => {
      if (before === 0) res.writeHead(500).end()
      else req.socket.end('HTTP/1.1 50', () => req.socket.destroy())
    })
    expect(deliveries).toHaveLength(1)
    const codes = deliveries[0]!.history.map((h) => h.error_code)
    expect(codes).toEqual([
      'HTTP_STATUS',
      'CONNECTION_ERROR',
      'HTTP_STATUS',
      'CONNECTION_ERROR',
      'HTTP_STATUS',
      'CONNECTION_ERROR',
      'HTTP_STATUS',
    ])
    expect(receiver.requests).toBe(MAX_ATTEMPTS)

    const reset = await deliverThrough((req) => req.socket.destroy())
    expect(reset.deliveries[0]!.history.map((h) => h.error_code)).toEqual(
      Array(MAX_ATTEMPTS).fill('CONNECTION_ERROR'),
    )
    expect(reset.receiver.requests).toBe(MAX_ATTEMPTS)
  })

  it('[WHN-026] pools a connection under the checked addresses: another DNS answer opens another connection', () => {
    const { http, https } = new WebhookConnections()
    for (const agent of [http, https]) {
      const name = (pinnedAddresses: string) =>
        agent.getName({ host: 'receiver.example', port: 443, pinnedAddresses } as never)
      expect(name('93.184.216.34/4')).toBe(name('93.184.216.34/4'))
      expect(name('93.184.216.34/4')).not.toBe(name('93.184.216.35/4'))
      expect(name('93.184.216.34/4')).not.toBe(name('93.184.216.34/4,2606:2800::1/6'))
    }
  })
})

describe('endpoint addresses parsed once per instance (WebhookConnections.target)', () => {
  it('[WHN-026][WHN-024] keeps the parsed address, never the checks: each send applies the rules again', async () => {
    const receiver = new CountingReceiver((_req, res) => res.writeHead(500).end())
    await receiver.start()
    open.push(receiver)
    const connections = new WebhookConnections()
    try {
      expect(connections.target(receiver.url)).toBe(connections.target(receiver.url))
      const send = (url: string, allowInsecure: boolean) =>
        sendNotification({ url, body: Buffer.from('{}'), headers: {}, allowInsecure, connections })
      // The same loopback address: sent with the insecure flag, refused without it (scheme and address).
      expect(await send(receiver.url, true)).toMatchObject({ httpStatus: 500 })
      expect(await send(receiver.url, false)).toEqual({
        ok: false,
        httpStatus: null,
        errorCode: 'ADDRESS_REFUSED',
      })
      const https = receiver.url.replace('http:', 'https:')
      const name = https.replace('127.0.0.1', 'localhost')
      for (const url of [https, name]) {
        connections.target(url)
        expect(await send(url, false)).toEqual({
          ok: false,
          httpStatus: null,
          errorCode: 'ADDRESS_REFUSED',
        })
      }
      expect(receiver.requests).toBe(1)
    } finally {
      connections.destroy()
    }
  })
})

describe("the pool's shared abort signal (one per reset, not one per send)", () => {
  it('keeps no listener of a send once the send is over, and still aborts a send in flight', async () => {
    const answering = new CountingReceiver((_req, res) => res.writeHead(500).end())
    const silent = new CountingReceiver(() => undefined)
    for (const r of [answering, silent]) {
      await r.start()
      open.push(r)
    }
    const connections = new WebhookConnections()
    const shared = new AbortController()
    setMaxListeners(0, shared.signal)
    const send = (url: string) =>
      sendNotification({
        url,
        body: Buffer.from('{}'),
        headers: { 'Content-Type': 'application/json' },
        allowInsecure: true,
        signal: shared.signal,
        connections,
      })
    try {
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => send(answering.url)))
      expect(outcomes.every((o) => o.httpStatus === 500)).toBe(true)
      // Each answer's body is drained before its request closes and lets go of the limit.
      await new Promise((resolve) => setImmediate(resolve))
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0)

      const inFlight = send(silent.url)
      while (silent.requests === 0) await new Promise((resolve) => setImmediate(resolve))
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1)
      shared.abort()
      expect(await inFlight).toEqual({ ok: false, httpStatus: null, errorCode: 'TIMEOUT' })
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0)
    } finally {
      connections.destroy()
    }
  })
})
