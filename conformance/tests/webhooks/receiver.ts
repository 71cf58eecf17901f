/**
 * A webhook receiver for the webhook tests: an HTTP server on 127.0.0.1 that records every request byte for
 * byte and answers as the test says, plus the suite's own reading of the signature scheme (Webhook
 * notifications 2-4), written from the document with Web Crypto so it shares no code with the mock.
 */
import { webcrypto } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach } from 'vitest'

export type Delivery = {
  method: string
  path: string
  headers: IncomingMessage['headers']
  raw: Buffer
  /** The parsed JSON body (undefined if it is not JSON). */
  json: Record<string, unknown> | undefined
}

export type Responder = (req: IncomingMessage, res: ServerResponse) => void

export const answer =
  (status: number, body = '', headers: Record<string, string> = {}): Responder =>
  (_req, res) => {
    res.writeHead(status, headers).end(body)
  }

export class TestReceiver {
  readonly received: Delivery[] = []
  respond: Responder = answer(204)
  private server: Server | undefined
  baseUrl = ''

  /** Listens on 127.0.0.1 on a free port. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
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
        this.received.push({
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          raw,
          json,
        })
        this.respond(req, res)
      })
    })
    const server = this.server
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return this
  }

  /** Forgets what was received and answers 204 again. */
  reset(): void {
    this.received.length = 0
    this.respond = answer(204)
  }

  /** Resolves once `count` requests have arrived; fails after timeoutMs of real time. */
  async waitFor(count: number, timeoutMs = 3000): Promise<Delivery[]> {
    const deadline = performance.now() + timeoutMs
    while (this.received.length < count) {
      if (performance.now() > deadline) {
        throw new Error(
          `expected ${count} webhook requests within ${timeoutMs} ms, got ${this.received.length}`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return this.received.slice(0, count)
  }

  async close(): Promise<void> {
    const server = this.server
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Rule 2's header shape. */
export const SIGNATURE_SHAPE = /^t=[0-9]{1,12},v1=[0-9a-f]{64}$/

/** The t of a Service-Signature header. */
export const signatureTime = (header: string): number => Number(header.split(',')[0]!.slice(2))

/** Rule 3 as the document states it: hex HMAC-SHA256, key = the full secret, over "<t>.<raw bytes>". */
export async function documentSignature(
  secret: string,
  t: string,
  raw: Uint8Array,
): Promise<string> {
  const key = await webcrypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const prefix = new TextEncoder().encode(`${t}.`)
  const message = new Uint8Array(prefix.length + raw.length)
  message.set(prefix)
  message.set(raw, prefix.length)
  return Buffer.from(await webcrypto.subtle.sign('HMAC', key, message)).toString('hex')
}

/** Rules 2-4: shape, signature with this secret, and |now - t| <= 300. */
export async function documentVerifies(
  d: Delivery,
  secret: string,
  nowS: number,
): Promise<boolean> {
  const header = d.headers['service-signature']
  if (typeof header !== 'string' || !SIGNATURE_SHAPE.test(header)) return false
  const [tPart, vPart] = header.split(',') as [string, string]
  const t = tPart.slice(2)
  if (Math.abs(nowS - Number(t)) > 300) return false
  return (await documentSignature(secret, t, d.raw)) === vPart.slice(3)
}

/** A receiver for the whole test file: started before its tests, emptied before each, closed after all. */
export function useTestReceiver(): TestReceiver {
  const receiver = new TestReceiver()
  beforeAll(async () => {
    await receiver.start()
  })
  afterAll(async () => {
    await receiver.close()
  })
  beforeEach(() => {
    receiver.reset()
  })
  return receiver
}
