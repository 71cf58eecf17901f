/**
 * The inspector on the control API: the change stream (GET /_mock/stream), the state and timeline views the
 * page reads, the page's own answers, and redaction: no view or stream event ever holds a whole API key,
 * owner token, download token or webhook secret. In process (mock.app.request); a webhook receiver on
 * 127.0.0.1 for the delivery views.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { ChangeFeed } from './change-feed.js'
import { redactSecret } from './redact.js'
import { CONTENT_SECURITY_POLICY } from './routes.js'

const KEY = 'sk_test_a_full'
const SHOWN_KEY = redactSecret(KEY)
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'
const PROJECT = 'aaaaaaaa-0000-4000-8000-000000000000'
const json = { 'Content-Type': 'application/json' }
const auth = { Authorization: `Bearer ${KEY}`, ...json }

let mock: Mock | undefined
let receiver: Server | undefined
afterEach(async () => {
  mock?.close()
  mock = undefined
  if (receiver) {
    receiver.closeAllConnections()
    await new Promise((resolve) => receiver!.close(resolve))
    receiver = undefined
  }
})

async function createSession(m: Mock, idem = 'k1') {
  const res = await m.app.request(`/v1/deployments/${DEPLOYMENT}/sessions`, {
    method: 'POST',
    headers: { ...auth, 'Idempotency-Key': idem },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'summarise' }] }),
  })
  expect(res.status).toBe(202)
  return (await res.json()) as { session_id: string; turn_id: string }
}

const advance = (m: Mock, seconds: number) =>
  m.app.request('/_mock/clock/advance', {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ seconds }),
  })

type Frame = { event: string; id?: string; data: Record<string, unknown> }

/** Reads SSE frames from a stream answer as they come; `until` says when enough has arrived. */
class FrameReader {
  frames: Frame[] = []
  text = ''
  private buffer = ''
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly decoder = new TextDecoder()
  constructor(res: Response) {
    this.reader = res.body!.getReader()
  }
  async until(done: (frames: Frame[]) => boolean, maxReads = 200): Promise<Frame[]> {
    for (let i = 0; i < maxReads && !done(this.frames); i += 1) {
      const { value, done: ended } = await this.reader.read()
      if (ended) break
      const chunk = this.decoder.decode(value, { stream: true })
      this.text += chunk
      this.buffer += chunk
      let end
      while ((end = this.buffer.indexOf('\n\n')) >= 0) {
        const block = this.buffer.slice(0, end)
        this.buffer = this.buffer.slice(end + 2)
        const f: Partial<Frame> = {}
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) f.event = line.slice(7)
          else if (line.startsWith('id: ')) f.id = line.slice(4)
          else if (line.startsWith('data: ')) f.data = JSON.parse(line.slice(6))
        }
        if (f.event && f.data) this.frames.push(f as Frame)
      }
    }
    return this.frames
  }
  cancel(): Promise<void> {
    return this.reader.cancel()
  }
}

describe('inspector', () => {
  it('GET /_mock/stream opens with the clock, then tells the Session, its events, the Turn and the advance', async () => {
    mock = await createMock()
    const res = await mock.app.request('/_mock/stream')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const stream = new FrameReader(res)
    const [first] = await stream.until((f) => f.length >= 1)
    expect(first!.event).toBe('clock')
    expect(first!.data).toEqual({ now: mock.clock.now().toISOString(), mode: 'manual' })

    const { turn_id } = await createSession(mock)
    expect((await advance(mock, 5)).status).toBe(200)
    // The advance's own `control` change comes once it has answered, after the changes it made.
    const frames = await stream.until((f) => f.some((x) => x.event === 'control'))
    await stream.cancel()

    const request = frames.find((f) => f.event === 'request')
    expect(request?.data).toMatchObject({ method: 'POST', operation: 'createSession', status: 202 })
    const events = frames.filter((f) => f.event === 'event' && f.data.turn_id === turn_id)
    expect(events.length).toBeGreaterThan(1)
    const done = frames.find((f) => f.event === 'execution' && f.data.status === 'SUCCEEDED')
    expect(done?.data).toMatchObject({ execution_id: turn_id, kind: 'TURN', change: 'status' })
    const control = frames.find((f) => f.event === 'control')
    expect(control?.data).toMatchObject({ method: 'POST', path: '/_mock/clock/advance' })
    const lastClock = frames.filter((f) => f.event === 'clock').at(-1)
    expect(lastClock?.data.now).toBe(mock.clock.now().toISOString())
    // ids increase along the stream
    const ids = frames.filter((f) => f.id !== undefined).map((f) => Number(f.id))
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('the change feed builds nothing while no stream is open, and a closed stream stops watching', async () => {
    const feed = new ChangeFeed()
    let built = 0
    feed.note('request', () => ({ n: ++built }))
    expect(built).toBe(0)
    const batches: unknown[] = []
    const stop = feed.watch(
      (b) => batches.push(b),
      () => undefined,
    )
    feed.note('request', () => ({ n: ++built }))
    feed.clockChanged()
    await Promise.resolve()
    expect(built).toBe(1)
    expect(batches).toEqual([
      { changes: [{ seq: 1, topic: 'request', data: { n: 1 } }], clock: true, dropped: 0 },
    ])
    stop()
    expect(feed.active).toBe(false)
    // A watcher that throws is dropped; the others still get the batch.
    const got: unknown[] = []
    feed.watch(
      () => {
        throw new Error('broken stream')
      },
      () => undefined,
    )
    feed.watch(
      (b) => got.push(b),
      () => undefined,
    )
    feed.note('control', () => ({}))
    await Promise.resolve()
    expect(got).toHaveLength(1)
    feed.closeAll()
    expect(feed.active).toBe(false)
    feed.note('request', () => ({ n: ++built }))
    expect(built).toBe(1)

    mock = await createMock()
    const res = await mock.app.request('/_mock/stream')
    const stream = new FrameReader(res)
    await stream.until((f) => f.length >= 1)
    expect(mock.deps.changes.active).toBe(true)
    await stream.cancel()
    expect(mock.deps.changes.active).toBe(false)
  })

  it('the timeline shows the Turn on the virtual time axis: pending timers first, then its status changes up to SUCCEEDED', async () => {
    mock = await createMock()
    const { turn_id } = await createSession(mock)
    const before = (await (await mock.app.request(`/_mock/ui/executions/${turn_id}`)).json()) as {
      execution: { status: string }
      pending: { label: string; kind: string }[]
    }
    expect(before.execution.status).toBe('QUEUED')
    expect(before.pending.map((p) => p.label)).toEqual(
      expect.arrayContaining([
        'queue timeout (QUEUE_TIMEOUT)',
        'script: running',
        'script: succeed',
      ]),
    )
    await advance(mock, 5)
    const after = (await (await mock.app.request(`/_mock/ui/executions/${turn_id}`)).json()) as {
      execution: { status: string; spent_su: number }
      entries: { at: string; kind: string; label: string; detail: string }[]
      pending: unknown[]
    }
    expect(after.execution.status).toBe('SUCCEEDED')
    const statuses = after.entries.filter((e) => e.kind === 'status').map((e) => e.detail)
    expect(statuses.at(-1)).toMatch(/^SUCCEEDED/)
    expect(after.entries.map((e) => e.at)).toEqual([...after.entries.map((e) => e.at)].sort())
    expect(after.pending).toEqual([])
    const state = (await (await mock.app.request('/_mock/ui/state')).json()) as {
      executions: { id: string; status: string }[]
      sessions: { id: string }[]
    }
    expect(state.executions.find((e) => e.id === turn_id)?.status).toBe('SUCCEEDED')
    expect((await mock.app.request('/_mock/ui/executions/nope')).status).toBe(404)
  })

  it("a Run's timeline lists its deadline among the pending timers, and a queue timeout that can no longer fire as such", async () => {
    mock = await createMock()
    const workflow = mock.fixtures().projects.find((p) => p.id === PROJECT)!.workflows[0]!
    const res = await mock.app.request(`/v1/workflows/${workflow.id}/runs`, {
      method: 'POST',
      headers: { ...auth, 'Idempotency-Key': 'run-1' },
      body: JSON.stringify({
        published_version: workflow.published_version,
        input: { topic: 't' },
      }),
    })
    expect(res.status).toBe(202)
    const { run_id } = (await res.json()) as { run_id: string }
    await advance(mock, 2)
    const t = (await (await mock.app.request(`/_mock/ui/executions/${run_id}`)).json()) as {
      execution: { kind: string; status: string; deadline_at: string }
      entries: { kind: string; detail: string }[]
      pending: { at: string; label: string; detail: string }[]
    }
    expect(t.execution).toMatchObject({ kind: 'RUN', status: 'RUNNING' })
    expect(t.entries.some((e) => e.kind === 'status' && e.detail === 'RUNNING')).toBe(true)
    const deadline = t.pending.find((p) => p.label.startsWith('Run deadline'))
    expect(deadline?.at).toBe(t.execution.deadline_at)
    expect(t.pending.find((p) => p.label.startsWith('queue timeout'))?.detail).toMatch(/no effect/)
  })

  it('[WHM-002] no view or stream event shows a whole API key, owner token, download token or webhook secret', async () => {
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end()))
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?sig=abc`
    mock = await createMock({ allowInsecureWebhooks: true })
    const stream = new FrameReader(await mock.app.request('/_mock/stream'))
    await stream.until((f) => f.length >= 1)

    const owner = mock.fixtures().projects.find((p) => p.id === PROJECT)!.owner_token
    const registered = await mock.app.request(`/api/runtime/projects/${PROJECT}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, ...json },
      body: JSON.stringify({ url: hook }),
    })
    expect(registered.status).toBe(201)
    const { secret } = (await registered.json()) as { secret: string }
    const stored = await mock.app.request('/_mock/artifacts', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        project_id: PROJECT,
        deployment_id: DEPLOYMENT,
        filename: 'a.txt',
        mime_type: 'text/plain',
        content_base64: Buffer.from('hello').toString('base64'),
      }),
    })
    const { artifact_id } = (await stored.json()) as { artifact_id: string }
    const download = await mock.app.request(`/v1/artifacts/${artifact_id}/download`, {
      method: 'POST',
      headers: { ...auth, 'Idempotency-Key': 'dl-1' },
    })
    expect(download.status).toBe(200)
    const { url } = (await download.json()) as { url: string }
    const token = new URL(url, 'http://mock').searchParams.get('token')!
    // A fault rule keyed on the bearer key, a referee finding of the key, a control path naming the key.
    mock.faults.add({ match: { key: KEY, operation: 'getTurn' }, action: { delay_ms: 1 } })
    const { session_id, turn_id } = await createSession(mock)
    for (let i = 0; i < 2; i += 1)
      await mock.app.request(`/v1/sessions/${session_id}/turns/${turn_id}`, { headers: auth })
    await mock.app.request(`/_mock/keys/${KEY}/scopes`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ scopes: ['events:read', 'runs:read'] }),
    })
    await advance(mock, 5)
    await mock.webhooks.idle()
    await advance(mock, 1)
    await stream.until((f) => f.some((x) => x.event === 'webhook'))
    await stream.cancel()

    const state = await (await mock.app.request('/_mock/ui/state')).text()
    const timeline = await (await mock.app.request(`/_mock/ui/executions/${turn_id}`)).text()
    const parsed = JSON.parse(state) as {
      projects: {
        id: string
        owner_token: string
        keys: { key: string }[]
        webhook_endpoints: { secret: string; url: string }[]
        rate_windows: { scope: string }[]
      }[]
      faults: { match: { key?: string } }[]
      referee: { violations: { key: string }[] }
      deliveries: { history: { http_status: number | null }[] }[]
    }
    const a = parsed.projects.find((p) => p.id === PROJECT)!
    // Shown, but redacted (so a view that dropped them would fail here, not pass silently).
    expect(a.owner_token).toMatch(/…$/)
    expect(SHOWN_KEY).toBe('sk_t…')
    expect(a.keys.map((k) => k.key)).toContain(SHOWN_KEY)
    expect(a.webhook_endpoints[0]!.secret).toMatch(/^whsec_.*…$/)
    expect(a.webhook_endpoints[0]!.url).not.toContain('sig=')
    expect(a.rate_windows.some((w) => w.scope.startsWith(`key:${SHOWN_KEY}:`))).toBe(true)
    expect(parsed.faults[0]!.match.key).toBe(SHOWN_KEY)
    expect(parsed.referee.violations.length).toBeGreaterThan(0)
    expect(parsed.deliveries[0]!.history[0]!.http_status).toBe(500)
    for (const [name, text] of [
      ['state', state],
      ['timeline', timeline],
      ['stream', stream.text],
    ] as const) {
      for (const secretText of [KEY, owner, token, secret, 'sig=abc'])
        expect(text.includes(secretText), `${name} holds ${secretText.slice(0, 4)}…`).toBe(false)
    }
    expect(stream.text).toContain(`/_mock/keys/${encodeURIComponent(SHOWN_KEY)}/scopes`)
  })

  it('webhook deliveries show each attempt, its signature time and outcome, and the retries still to come', async () => {
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(503).end()))
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))
    mock = await createMock({ allowInsecureWebhooks: true })
    const owner = mock.fixtures().projects.find((p) => p.id === PROJECT)!.owner_token
    await mock.app.request(`/api/runtime/projects/${PROJECT}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, ...json },
      body: JSON.stringify({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      }),
    })
    const { turn_id } = await createSession(mock)
    await advance(mock, 5)
    await mock.webhooks.idle()
    await advance(mock, 60)
    await mock.webhooks.idle()
    const timeline = (await (await mock.app.request(`/_mock/ui/executions/${turn_id}`)).json()) as {
      deliveries: {
        status: string
        attempts: number
        history: { attempt: number; signed_at: string; http_status: number; outcome: string }[]
        retries_to_come: string[]
      }[]
      entries: { kind: string }[]
      pending: { kind: string }[]
    }
    const d = timeline.deliveries.find((x) => x.attempts === 2)!
    expect(d.status).toBe('PENDING')
    expect(d.history.map((h) => [h.attempt, h.http_status, h.outcome])).toEqual([
      [1, 503, 'FAILED'],
      [2, 503, 'FAILED'],
    ])
    const first = Date.parse(d.history[0]!.signed_at)
    expect(Date.parse(d.history[1]!.signed_at) - first).toBe(60_000)
    expect(d.retries_to_come.map((at) => (Date.parse(at) - first) / 1000)).toEqual([
      300, 1800, 7200, 28800, 86400,
    ])
    expect(timeline.entries.filter((e) => e.kind === 'webhook').length).toBeGreaterThanOrEqual(2)
    expect(timeline.pending.some((p) => p.kind === 'webhook')).toBe(true)
  })

  it('serves the page and its assets with a strict Content-Security-Policy, also to a mock with a control token; its data need the token', async () => {
    mock = await createMock({ controlToken: 'ctl-secret' })
    const page = await mock.app.request('/_mock/ui')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe/)
    const html = await page.text()
    expect(html).toContain('<script type="module" src="/_mock/ui/inspector.js"></script>')
    expect(html).not.toMatch(/<script>|<style>|\sstyle=|\son[a-z]+=/)
    for (const asset of ['/_mock/ui/inspector.js', '/_mock/ui/inspector.css']) {
      const res = await mock.app.request(asset)
      expect(res.status).toBe(200)
      expect((await res.text()).length).toBeGreaterThan(100)
    }
    expect((await mock.app.request('/_mock/ui/state')).status).toBe(401)
    expect((await mock.app.request('/_mock/ui/executions/x')).status).toBe(401)
    expect((await mock.app.request('/_mock/stream')).status).toBe(401)
    const withToken = await mock.app.request('/_mock/ui/state', {
      headers: { Authorization: 'Bearer ctl-secret' },
    })
    expect(withToken.status).toBe(200)
    // HEAD of the stream: its headers, and no stream left open.
    const head = await mock.app.request('/_mock/stream', {
      method: 'HEAD',
      headers: { Authorization: 'Bearer ctl-secret' },
    })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(mock.deps.changes.active).toBe(false)
  })
})
