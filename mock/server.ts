/**
 * Serving a mock over HTTP on Node (@hono/node-server). Node refuses some requests before the app runs
 * (a malformed request line or unknown method, broken chunked encoding, headers or URL over its size limit):
 * those answers are the error envelope too, with X-Request-Id and Cache-Control: no-store, and close the
 * connection, since the rest of what the client sent cannot be framed. A path with dot segments (`..`, `.`,
 * also percent-encoded) is refused before routing: URL parsing would resolve it and could lead a /v1 path
 * onto the control API. A fault rule's drop (ConnectionDropped) destroys the socket: no answer is written.
 */
import {
  createServer as createNodeServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import type { Deps } from './deps.js'
import { ApiError, ConnectionDropped, errorEnvelope } from './errors.js'

/** What the app is told about a request served over Node HTTP (Hono's c.env): its IncomingMessage. */
export type NodeBindings = { incoming: object }

/** What a server needs of a mock instance. */
export type Servable = {
  fetch: (request: Request, env?: NodeBindings) => Response | Promise<Response>
  deps: Deps
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  431: 'Request Header Fields Too Large',
}

/** The raw HTTP/1.1 answer to a request Node refused before the app ran. */
export function clientErrorAnswer(code: string | undefined, requestId: string): string {
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const error = new ApiError('HTTP_ERROR', {
    status,
    message:
      status === 431
        ? 'The request headers or URL are over the size limit.'
        : 'The request is malformed and cannot be read.',
    details: code ? { reason: code } : {},
  })
  const body = JSON.stringify(errorEnvelope(error, requestId))
  return [
    `HTTP/1.1 ${status} ${REASONS[status]}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n')
}

/** A dot segment (`.` or `..`, any case of percent-encoding) in the path part of a raw request target. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i

/** Whether a raw request target's path holds a dot segment. */
export const hasDotSegment = (target: string): boolean => DOT_SEGMENT.test(target.split(/[?#]/)[0]!)

/**
 * Answers finished in one turn of the event loop, written together at its end: each response's end() is held
 * until the loop's check phase (setImmediate), then all are ended in the order they finished. A socket
 * write that wakes a client waiting on another CPU costs the writer the wakeup (on a virtual machine, an
 * interrupt through the hypervisor); answers written back to back wake it once. A streaming answer's
 * chunks go out as written; only its end waits.
 */
export function answerBurst(failed: (error: unknown) => void): { hold(res: ServerResponse): void } {
  const held: { res: ServerResponse; end: ServerResponse['end']; args: unknown[] }[] = []
  const flush = () => {
    for (const a of held.splice(0)) {
      // Every held answer is ended, whatever one of them throws (told to `failed`).
      try {
        ;(a.end as (...args: unknown[]) => unknown).apply(a.res, a.args)
      } catch (error) {
        failed(error)
      }
    }
  }
  return {
    hold(res) {
      const end = res.end
      res.end = function (this: ServerResponse, ...args: unknown[]) {
        if (held.length === 0) setImmediate(flush)
        held.push({ res, end, args })
        return this
      } as ServerResponse['end']
    },
  }
}

/** An HTTP server for the mock (not listening yet). */
export function createServer(mock: Servable): Server {
  const serveApp = getRequestListener(
    // An answer ready at once is handed back as it is (not in a promise): the adapter writes it directly.
    (request: Request, env: { incoming: { socket: Socket | null } }) => {
      const drop = (error: unknown): never => {
        // A fault rule's drop (mock/faults/rules.ts): the connection closes with no answer at all.
        if (error instanceof ConnectionDropped) env.incoming.socket?.destroy()
        throw error
      }
      try {
        const answer = mock.fetch(request, { incoming: env.incoming })
        return answer instanceof Promise ? answer.catch(drop) : answer
      } catch (error) {
        return drop(error)
      }
    },
    {
      // undefined: nothing is written (the dropped socket); anything else thrown is a bare 500.
      errorHandler: (error) =>
        error instanceof ConnectionDropped ? undefined : new Response(null, { status: 500 }),
    },
  )
  /** Answers a request the app must not see with the envelope (the connection stays usable). */
  const refuse = (res: ServerResponse, status: 400 | 404, message: string) => {
    const requestId = mock.deps.ids.requestId()
    const body = JSON.stringify(
      errorEnvelope(new ApiError('HTTP_ERROR', { status, message }), requestId),
    )
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestId,
      'Cache-Control': 'no-store',
    })
    res.end(body)
  }
  const burst = answerBurst((error) =>
    mock.deps.log.error('writing an answer failed', {
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }),
  )
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    burst.hold(res)
    const target = req.url ?? ''
    // An asterisk- or absolute-form target ("OPTIONS *", "GET http://…") is no path of the interface.
    if (!target.startsWith('/')) return refuse(res, 400, 'the request target must be a path')
    if (hasDotSegment(target))
      return refuse(res, 404, 'no such path (dot segments are not resolved)')
    // A request without Host (HTTP/1.0, or an HTTP/1.1 client that left it out) is served on our own name.
    if (req.headers.host === undefined) req.headers.host = 'localhost'
    void serveApp(req, res)
  }
  // requireHostHeader: Node's own answer to a missing Host has no envelope; the app serves it instead.
  const server = createNodeServer({ requireHostHeader: false }, handle)
  // An Expect header other than 100-continue: Node would answer its own 417; serve the request instead.
  server.on('checkExpectation', handle)
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    // A connection reset or timeout has nobody left to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy()
    // Bytes that cannot be framed after a complete request: that request is being answered; let its answer
    // go out, then close (the rest cannot be read). Node keeps the pending response on the socket.
    const pending = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage
    if (pending && !pending.writableFinished && pending.req.complete) {
      pending.shouldKeepAlive = false
      pending.once('finish', () => socket.end())
      return
    }
    const requestId = mock.deps.ids.requestId()
    mock.deps.log.info('client error', { request_id: requestId, reason: error.code ?? 'unknown' })
    socket.end(clientErrorAnswer(error.code, requestId))
  })
  return server
}

/** A listening server and its base URL. */
export type Listening = { server: Server; url: string; close(): Promise<void> }

/** Serves the mock on host:port (port 0: any free port); resolves once it accepts requests. */
export async function listen(
  mock: Servable,
  opts: { port?: number; host?: string } = {},
): Promise<Listening> {
  const host = opts.host ?? '127.0.0.1'
  const server = createServer(mock)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  return {
    server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Open keep-alive and streaming connections must not hold the close.
        server.closeAllConnections()
      }),
  }
}
