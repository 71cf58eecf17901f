/**
 * Certificate verification of webhook receivers (Webhook notifications 10: "HTTPS only with certificate
 * verification"): a real HTTPS receiver on 127.0.0.1 with a self-signed certificate made at run time. The send
 * fails with TLS_ERROR and the receiver never sees the request; trusting that certificate (--webhook-ca) lets
 * it through, and the host name is still checked.
 */
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { generate } from 'selfsigned'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { appendTurnOutcome, managedProject } from '../events/test-events.js'
import { WebhookConnections } from './connections.js'
import { sendNotification } from './sender.js'

/** An HTTPS receiver on 127.0.0.1 answering 204 and counting the requests and connections that reached it. */
class HttpsReceiver {
  requests = 0
  connections = 0
  url = ''
  private server!: Server
  async start(pem: { key: string; cert: string }): Promise<void> {
    this.server = createServer({ key: pem.key, cert: pem.cert }, (req, res) => {
      req.resume()
      req.on('end', () => {
        this.requests++
        res.writeHead(204).end()
      })
    })
    // A failed handshake is the sender's problem; the receiver just drops it.
    this.server.on('tlsClientError', () => undefined)
    this.server.on('secureConnection', () => this.connections++)
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }
  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** A self-signed certificate for the given subject alternative names. */
const selfSigned = (altNames: { type: 2 | 7; value?: string; ip?: string }[]) =>
  generate([{ name: 'commonName', value: 'local receiver' }], {
    keyType: 'ec',
    extensions: [{ name: 'subjectAltName', altNames }],
  })

let forLoopback: Awaited<ReturnType<typeof generate>>
let forOtherName: Awaited<ReturnType<typeof generate>>
const receiver = new HttpsReceiver()
const misnamed = new HttpsReceiver()
beforeAll(async () => {
  forLoopback = await selfSigned([{ type: 7, ip: '127.0.0.1' }])
  forOtherName = await selfSigned([{ type: 2, value: 'receiver.example' }])
  await receiver.start({ key: forLoopback.private, cert: forLoopback.cert })
  await misnamed.start({ key: forOtherName.private, cert: forOtherName.cert })
})
afterAll(async () => {
  await receiver.close()
  await misnamed.close()
})

const open: Mock[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
  receiver.requests = 0
  receiver.connections = 0
  misnamed.requests = 0
})

const send = (url: string, trustedCa?: string, connections?: WebhookConnections) =>
  sendNotification({
    url,
    body: Buffer.from('{}'),
    headers: { 'Content-Type': 'application/json' },
    allowInsecure: true, // loopback: only the address rules are lifted, never the certificate check
    trustedCa,
    timeoutMs: 10_000,
    connections,
  })

describe('webhook receiver certificates', () => {
  it('[WHN-024] fails a send to a self-signed receiver with TLS_ERROR; the request never reaches it', async () => {
    expect(await send(receiver.url)).toEqual({
      ok: false,
      httpStatus: null,
      errorCode: 'TLS_ERROR',
    })
    expect(receiver.requests).toBe(0)
  })

  it('[WHN-024] delivers once the certificate is trusted (webhookCa), and still checks the host name', async () => {
    expect(await send(receiver.url, forLoopback.cert)).toEqual({
      ok: true,
      httpStatus: 204,
      errorCode: null,
    })
    expect(receiver.requests).toBe(1)
    // Trusted, but issued for receiver.example, not 127.0.0.1.
    expect(await send(misnamed.url, forOtherName.cert)).toMatchObject({ errorCode: 'TLS_ERROR' })
    expect(misnamed.requests).toBe(0)
  })

  it('[WHN-024] reuses a verified kept-alive connection only under the same trusted certificates', async () => {
    const connections = new WebhookConnections()
    try {
      for (let i = 0; i < 3; i++) {
        expect(await send(receiver.url, forLoopback.cert, connections)).toMatchObject({ ok: true })
      }
      expect(receiver.requests).toBe(3)
      expect(receiver.connections).toBe(1)
      // A verified connection to this receiver is idle in the pool, but a send that does not trust its
      // certificate is not handed it: it connects anew and the check fails.
      expect(await send(receiver.url, undefined, connections)).toMatchObject({
        errorCode: 'TLS_ERROR',
      })
      expect(receiver.requests).toBe(3)
    } finally {
      connections.destroy()
    }
  })

  it('[WHN-024][WHN-021] records the failed attempt as TLS_ERROR and keeps the delivery for its retry', async () => {
    for (const webhookCa of [undefined, forLoopback.cert]) {
      const mock = await createMock({ allowInsecureWebhooks: true, webhookCa })
      open.push(mock)
      const { project, manage } = managedProject(mock)
      const registered = await manage('POST', '/webhooks', { url: receiver.url })
      expect(registered.status, await registered.clone().text()).toBe(201)
      appendTurnOutcome(mock, project.id, 'SUCCEEDED')
      await mock.clock.advance(1)
      await mock.webhooks.idle()
      const list = (await (await manage('GET', '/webhook-deliveries')).json()) as {
        items: Record<string, unknown>[]
      }
      expect(list.items).toHaveLength(1)
      if (webhookCa === undefined) {
        expect(list.items[0]).toMatchObject({
          status: 'PENDING',
          attempts: 1,
          last_http_status: null,
          last_error_code: 'TLS_ERROR',
        })
        expect(list.items[0]!.next_attempt_at).not.toBeNull()
        expect(receiver.requests).toBe(0)
      } else {
        expect(list.items[0]).toMatchObject({ status: 'SUCCEEDED', attempts: 1 })
        expect(receiver.requests).toBe(1)
      }
    }
  })
})
