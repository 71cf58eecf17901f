/**
 * The suite's HTTP client: supertest against the target's base URL. Every response it returns has passed
 * RESPONSE_CHECKS (conformance/checks) for the documented operation, before the test's own assertions.
 * On a real target every request goes through the run's pacer (pace.ts: call rates, 429 resends, a proxy's bare
 * 502/503/504 sent again, spending); the checks judge the answer the pacer settles on, each attempt is recorded.
 */
import request from 'supertest'
import type { Response, Test } from 'supertest'
import { runChecks } from '../checks/index.js'
import { recordExchange, tallyResponse, type Exchange } from './exchanges.js'
import { findOperation } from './operations.js'
import type { RunPacer } from './pace.js'

export type ApiResponse = {
  status: number
  headers: Record<string, string>
  body: unknown
  text: string
}

export type RequestOptions = {
  /** API key sent as `Authorization: Bearer <key>`; a bearer token for management paths likewise. */
  key?: string
  /** Idempotency-Key header. */
  idem?: string
  headers?: Record<string, string>
  query?: Record<string, string | number>
  /** Run the response checks (default true). */
  check?: boolean
}

/** What the client sent, for the failure report (exchanges.ts). */
type Sent = { startedMs: number; method: string; path: string; opts: RequestOptions; body?: string }

export type UploadFile = { content: Buffer | string; filename: string; contentType?: string }

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    /** The run's pacer (real targets); without it requests go out as they are asked for. */
    readonly pacer?: RunPacer,
  ) {}

  get = (path: string, opts?: RequestOptions) => this.send('GET', path, undefined, opts)
  post = (path: string, body?: unknown, opts?: RequestOptions) =>
    this.send('POST', path, body, opts)
  patch = (path: string, body?: unknown, opts?: RequestOptions) =>
    this.send('PATCH', path, body, opts)
  delete = (path: string, body?: unknown, opts?: RequestOptions) =>
    this.send('DELETE', path, body, opts)

  /** Sends a JSON body (or a raw string/Buffer when given one: its content type is up to the caller). */
  async send(
    method: string,
    path: string,
    body?: unknown,
    opts: RequestOptions = {},
  ): Promise<ApiResponse> {
    return this.paced({ method, path, idem: opts.idem, body, key: opts.key }, opts, async () => {
      let test = this.prepare(method, path, opts)
      if (body !== undefined) test = test.send(body as object)
      const sent: Sent = { startedMs: Date.now(), method, path, opts, body: bodyText(body) }
      return this.finish(sent, await test)
    })
  }

  /** multipart/form-data upload with one part named `file` (plus optional extra fields and files). */
  async upload(
    path: string,
    file: UploadFile | undefined,
    opts: RequestOptions & {
      fields?: Record<string, string>
      extraFiles?: (UploadFile & { field: string })[]
    } = {},
  ): Promise<ApiResponse> {
    return this.paced({ method: 'POST', path, idem: opts.idem, key: opts.key }, opts, () =>
      this.sendUpload(path, file, opts),
    )
  }

  private async sendUpload(
    path: string,
    file: UploadFile | undefined,
    opts: RequestOptions & {
      fields?: Record<string, string>
      extraFiles?: (UploadFile & { field: string })[]
    },
  ): Promise<ApiResponse> {
    let test = this.prepare('POST', path, opts)
    if (file)
      test = test.attach('file', Buffer.from(file.content), {
        filename: file.filename,
        contentType: file.contentType ?? 'application/octet-stream',
      })
    for (const extra of opts.extraFiles ?? []) {
      test = test.attach(extra.field, Buffer.from(extra.content), {
        filename: extra.filename,
        contentType: extra.contentType ?? 'application/octet-stream',
      })
    }
    for (const [name, value] of Object.entries(opts.fields ?? {})) test = test.field(name, value)
    const parts = [
      ...(file ? [`file=${file.filename} (${Buffer.byteLength(file.content)} bytes)`] : []),
      ...(opts.extraFiles ?? []).map(
        (f) => `${f.field}=${f.filename} (${Buffer.byteLength(f.content)} bytes)`,
      ),
      ...Object.entries(opts.fields ?? {}).map(([k, v]) => `${k}=${v}`),
    ]
    const sent: Sent = {
      startedMs: Date.now(),
      method: 'POST',
      path,
      opts,
      body: `multipart/form-data: ${parts.join('; ')}`,
    }
    return this.finish(sent, await test)
  }

  /**
   * One request through the pacer when there is one (sent again, unchanged, after a paced 429 or a proxy's bare
   * 502/503/504), then the response checks on the answer it settles on.
   */
  private async paced(
    req: { method: string; path: string; idem?: string; body?: unknown; key?: string },
    opts: RequestOptions,
    send: () => Promise<ApiResponse>,
  ): Promise<ApiResponse> {
    const out = this.pacer ? await this.pacer.send(req, send) : await send()
    if (opts.check !== false) {
      const operation = findOperation(req.method, req.path)
      tallyResponse(operation?.operationId, out.status)
      const isJson = /json/.test(String(out.headers['content-type'] ?? ''))
      runChecks({
        method: req.method,
        path: req.path,
        operation,
        response: { ...out, body: isJson ? out.body : undefined },
      })
    }
    return out
  }

  private prepare(method: string, path: string, opts: RequestOptions): Test {
    const agent = request(this.baseUrl)
    let test = (agent[method.toLowerCase() as 'get'] as (p: string) => Test)(path)
    if (opts.key !== undefined) test = test.set('Authorization', `Bearer ${opts.key}`)
    // A mock started with --control-token needs it on every control call, also those made with send().
    else if (path.startsWith('/_mock/') && process.env.MOCK_CONTROL_TOKEN)
      test = test.set('Authorization', `Bearer ${process.env.MOCK_CONTROL_TOKEN}`)
    if (opts.idem !== undefined) test = test.set('Idempotency-Key', opts.idem)
    for (const [k, v] of Object.entries(opts.headers ?? {})) test = test.set(k, v)
    if (opts.query) test = test.query(opts.query)
    return test.buffer(true)
  }

  /** The answer as the suite sees it, recorded as an exchange (the checks run in paced()). */
  private finish(sent: Sent, res: Response): ApiResponse {
    const { path } = sent
    const text =
      typeof res.text === 'string'
        ? res.text
        : Buffer.isBuffer(res.body)
          ? res.body.toString('utf8')
          : ''
    const isJson = /json/.test(String(res.headers['content-type'] ?? ''))
    const out: ApiResponse = {
      status: res.status,
      headers: res.headers as Record<string, string>,
      body: isJson ? res.body : Buffer.isBuffer(res.body) ? res.body : text,
      text,
    }
    // The suite's own look at the referee (use-target.ts) is not an exchange of the test.
    if (!path.startsWith('/_mock/referee')) recordExchange(this.exchange(sent, out))
    return out
  }

  private exchange(sent: Sent, res: ApiResponse): Exchange {
    const { opts } = sent
    const url = new URL(sent.path, this.baseUrl)
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v))
    const headers: Record<string, string> = {}
    if (opts.key !== undefined) headers.Authorization = `Bearer ${opts.key}`
    if (opts.idem !== undefined) headers['Idempotency-Key'] = opts.idem
    if (sent.body !== undefined && !sent.body.startsWith('multipart/'))
      headers['Content-Type'] = 'application/json'
    Object.assign(headers, opts.headers)
    return {
      startedAt: new Date(sent.startedMs).toISOString(),
      ms: Date.now() - sent.startedMs,
      request: {
        method: sent.method,
        url: url.toString(),
        headers,
        ...(sent.body === undefined ? {} : { body: sent.body }),
      },
      response: {
        status: res.status,
        headers: res.headers,
        body: Buffer.isBuffer(res.body) ? `<${res.body.byteLength} bytes>` : res.text,
      },
    }
  }
}

/** A request body as text for the report. */
function bodyText(body: unknown): string | undefined {
  if (body === undefined) return undefined
  if (typeof body === 'string') return body
  if (Buffer.isBuffer(body)) return `<${body.byteLength} bytes>`
  return JSON.stringify(body)
}
