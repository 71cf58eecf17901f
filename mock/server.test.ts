import { createServer as createNodeServer, type ServerResponse } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from './index.js'
import { memoryLog } from './util/log.js'
import { answerBurst, listen, type Listening } from './server.js'

let mock: Mock
let served: Listening
beforeEach(async () => {
  mock = await createMock({ rateLimits: false })
  served = await listen(mock)
})
afterEach(async () => {
  await served.close()
  mock.close()
})

/** Sends raw bytes on a fresh connection; resolves with everything received until the server closes it. */
function raw(bytes: string, opts: { endAfterWrite?: boolean } = {}): Promise<string> {
  const { port } = served.server.address() as { port: number }
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (received += chunk))
    socket.on('end', () => resolve(received))
    socket.on('error', reject)
    socket.write(bytes)
    if (opts.endAfterWrite) socket.end()
  })
}

/** Status, headers (lower-case names) and JSON body of one raw HTTP/1.1 answer. */
function parse(answer: string) {
  const [head, ...rest] = answer.split('\r\n\r\n')
  const [statusLine, ...headerLines] = head!.split('\r\n')
  const headers = Object.fromEntries(
    headerLines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  )
  return {
    status: Number(statusLine!.split(' ')[1]),
    headers,
    body: JSON.parse(rest.join('\r\n\r\n')),
  }
}

function expectEnvelope(answer: string, status: number, code: string) {
  const { status: got, headers, body } = parse(answer)
  expect(got).toBe(status)
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe('string')
  expect(body.error.retryable).toBe(false)
  expect(body.error.details).toBeTypeOf('object')
  expect(headers['x-request-id']).toBe(body.error.request_id)
  expect(headers['cache-control']).toBe('no-store')
  expect(headers['connection']).toBe('close')
}

describe('answers Node gives before the app runs', () => {
  it('[ERR-001][ERR-005] answers headers over the size limit with the envelope (HTTP_ERROR 431)', async () => {
    const answer = await raw(
      `GET /v1/deployments HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    )
    expectEnvelope(answer, 431, 'HTTP_ERROR')
  })

  it('[ERR-001][ERR-005] answers a URL over the size limit with the envelope (HTTP_ERROR 431)', async () => {
    const answer = await raw(`GET /v1/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expectEnvelope(answer, 431, 'HTTP_ERROR')
  })

  it('[ERR-001][ERR-005] answers an unknown method and a malformed request line with the envelope (HTTP_ERROR 400)', async () => {
    expectEnvelope(await raw('FROB /v1/deployments HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'HTTP_ERROR')
    expectEnvelope(await raw('this is not http\r\n\r\n'), 400, 'HTTP_ERROR')
  })

  it('[ERR-001][ERR-005] answers broken chunked encoding with the envelope', async () => {
    const answer = await raw(
      'POST /v1/deployments/x/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test_a_full\r\n' +
        'Content-Type: application/json\r\nIdempotency-Key: k\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n\r\n',
    )
    // The parser refuses the framing (envelope), or the app answered before the body: never a bare close.
    expect(answer).not.toBe('')
    const { body, headers } = parse(answer.slice(answer.lastIndexOf('HTTP/1.1')))
    expect(headers['x-request-id']).toBe(body.error.request_id)
  })

  it('[EP-003] closes the connection after an early 413, so the unread body is never taken for a request', async () => {
    const answer = await raw(
      'POST /v1/deployments/aaaaaaaa-d000-4000-8000-000000000001/sessions HTTP/1.1\r\nHost: x\r\n' +
        'Authorization: Bearer sk_test_a_full\r\nContent-Type: application/json\r\nIdempotency-Key: big\r\n' +
        `Content-Length: ${200 * 1024}\r\n\r\n{"input":[`,
    )
    const { status, headers, body } = parse(answer)
    expect([status, body.error.code]).toEqual([413, 'INPUT_TOO_LARGE'])
    expect(headers['connection']).toBe('close')
  })
})

describe('logs', () => {
  it('logs a client that aborts mid-body as one line, never as an unhandled error', async () => {
    const log = memoryLog()
    const m = await createMock({ rateLimits: false, log })
    const s = await m.listen()
    try {
      const { port } = s.server.address() as { port: number }
      await new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            'POST /v1/deployments/aaaaaaaa-d000-4000-8000-000000000001/sessions HTTP/1.1\r\nHost: x\r\n' +
              'Authorization: Bearer sk_test_a_full\r\nContent-Type: application/json\r\n' +
              'Idempotency-Key: abort\r\nContent-Length: 1000\r\n\r\n{"input":',
          )
          setTimeout(() => {
            socket.destroy()
            resolve()
          }, 100)
        })
      })
      for (let i = 0; i < 50 && !log.lines.some((l) => l.msg === 'client aborted'); i++)
        await new Promise((r) => setTimeout(r, 20))
      expect(log.lines.filter((l) => l.level === 'error')).toEqual([])
      expect(log.lines.filter((l) => l.msg === 'client aborted')).toHaveLength(1)
    } finally {
      await s.close()
      m.close()
    }
  })
})

describe('paths', () => {
  it('refuses dot segments before routing, so a /v1 path never reaches the control API', async () => {
    await mock.clock.advance(3600)
    const before = mock.clock.now().getTime()
    for (const target of [
      '/v1/sessions/%2e%2e/%2e%2e/_mock/reset',
      '/v1/sessions/../../_mock/reset',
      '/v1/%2E%2e/_mock/reset',
      '/v1/./deployments',
    ]) {
      const answer = await raw(`POST ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      const { status, headers, body } = parse(answer)
      expect([status, body.error.code]).toEqual([404, 'HTTP_ERROR'])
      expect(headers['x-request-id']).toBe(body.error.request_id)
    }
    expect(mock.clock.now().getTime()).toBe(before)
  })
})

describe('answer bursts', () => {
  it('writes the answers finished in one turn of the event loop together after it, in the order they finished', async () => {
    const failures: unknown[] = []
    const burst = answerBurst((error) => failures.push(error))
    const written: string[] = []
    const response = (name: string) => {
      const res = {
        end(this: unknown, body: string) {
          expect(this).toBe(res)
          if (body === 'throws') throw new Error(name)
          written.push(`${name}:${body}`)
          return this
        },
      }
      burst.hold(res as unknown as ServerResponse)
      return res as unknown as ServerResponse
    }
    const [a, b, c, d] = [response('a'), response('b'), response('c'), response('d')]
    expect(b.end('2')).toBe(b)
    d.end('throws')
    a.end('1')
    expect(written).toEqual([])
    await new Promise((done) => setImmediate(done))
    // One answer that fails to end holds back none of the others; its error is told.
    expect(written).toEqual(['b:2', 'a:1'])
    expect(failures).toEqual([new Error('d')])
    c.end('3')
    expect(written).toEqual(['b:2', 'a:1'])
    await new Promise((done) => setImmediate(done))
    expect(written).toEqual(['b:2', 'a:1', 'c:3'])
  })

  it('answers concurrent requests and pipelined ones on one connection, each with its own answer, in order', async () => {
    const headers = { Authorization: 'Bearer sk_test_a_full' }
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${served.url}/v1/deployments${i % 2 ? '' : '/no-such'}`, { headers }),
      ),
    )
    expect(answers.map((r) => r.status)).toEqual(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? 200 : 404)),
    )
    const ids = new Set(answers.map((r) => r.headers.get('x-request-id')))
    expect(ids.size).toBe(40)
    const get = (path: string, close = false) =>
      `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_test_a_full\r\n${close ? 'Connection: close\r\n' : ''}\r\n`
    const both = await raw(get('/v1/deployments/no-such') + get('/v1/deployments', true))
    const statuses = [...both.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))
    expect(statuses).toEqual([404, 200])
  })

  it('drops a held answer whose client has gone, without an error, and goes on serving', async () => {
    const errors: unknown[] = []
    const burst = answerBurst((error) => errors.push(error))
    const onError = (error: unknown) => errors.push(error)
    process.on('uncaughtException', onError)
    const server = createNodeServer((req, res) => {
      burst.hold(res)
      if (req.url === '/gone') req.socket.destroy()
      res.end('answer')
    })
    try {
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
      const { port } = server.address() as AddressInfo
      await expect(fetch(`http://127.0.0.1:${port}/gone`)).rejects.toThrow()
      await new Promise((done) => setTimeout(done, 20))
      const after = await fetch(`http://127.0.0.1:${port}/next`)
      expect(await after.text()).toBe('answer')
      expect(errors).toEqual([])
    } finally {
      process.off('uncaughtException', onError)
      server.closeAllConnections()
      await new Promise((done) => server.close(done))
    }
  })
})
