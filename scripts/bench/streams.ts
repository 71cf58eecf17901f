/**
 * The mock's own fan-out work over HTTP, where bare Hono and Prism have nothing to compare: SSE fan-out (200
 * open streams receiving events while the clock advances) and webhook deliveries to a local receiver.
 */
import { createServer, request, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Target } from './targets.js'
import { AUTH, DEPLOYMENT, JSON_AUTH, KEY, SESSION_BODY, control, prepareWorld } from './world.js'

const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6

async function post(base: string, path: string, body: string, headers: Record<string, string>) {
  const res = await fetch(base + path, { method: 'POST', headers, body })
  const text = await res.text()
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, string>) : {} }
}

export type FanOutResult = {
  streams: number
  events: number
  wallMs: number
  eventsPerS: number
  cpuUsPerEvent: number | undefined
}

/**
 * `sessions` Sessions with `streams / sessions` open SSE streams each; then `turns` more Turns per Session,
 * each followed by clock advances until it ends. Counts the events the streams receive.
 */
export async function sseFanOut(
  mock: Target,
  opts: { streams: number; sessions: number; turns: number },
): Promise<FanOutResult> {
  await prepareWorld(mock.url)
  const ids: string[] = []
  for (let s = 0; s < opts.sessions; s++) {
    const r = await post(mock.url, `/v1/deployments/${DEPLOYMENT}/sessions`, SESSION_BODY, {
      ...JSON_AUTH,
      'Idempotency-Key': `fan-${s}`,
    })
    if (r.status !== 202) throw new Error(`fan-out session: ${r.status}`)
    ids.push(r.json.session_id!)
  }
  await control(mock.url, 'POST', '/clock/advance', { seconds: 60 })
  let events = 0
  const open: IncomingMessage[] = []
  const host = new URL(mock.url)
  await Promise.all(
    Array.from({ length: opts.streams }, (_, i) => {
      const session = ids[i % ids.length]!
      return new Promise<void>((resolve, reject) => {
        const req = request(
          {
            host: host.hostname,
            port: host.port,
            path: `/v1/sessions/${session}/events`,
            headers: { ...AUTH, Accept: 'text/event-stream' },
          },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`))
            open.push(res)
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              for (let at = chunk.indexOf('\nid:'); at !== -1; at = chunk.indexOf('\nid:', at + 1))
                events++
              if (chunk.startsWith('id:')) events++
            })
            resolve()
          },
        )
        req.on('error', reject)
        req.end()
      })
    }),
  )
  await new Promise((r) => setTimeout(r, 300)) // the replays of the first Turns' events arrive
  events = 0
  const cpu0 = mock.cpuMs()
  const start = process.hrtime.bigint()
  for (let t = 0; t < opts.turns; t++) {
    for (const [s, session] of ids.entries()) {
      const r = await post(mock.url, `/v1/sessions/${session}/turns`, SESSION_BODY, {
        ...JSON_AUTH,
        'Idempotency-Key': `fan-${s}-${t}`,
      })
      if (r.status !== 202) throw new Error(`fan-out turn: ${r.status} ${JSON.stringify(r.json)}`)
    }
    for (let k = 0; k < 30; k++) await control(mock.url, 'POST', '/clock/advance', { seconds: 1 })
  }
  // The last events reach the streams.
  let seen = -1
  while (seen !== events) {
    seen = events
    await new Promise((r) => setTimeout(r, 200))
  }
  const wallMs = ms(start) - 200
  const cpu1 = mock.cpuMs()
  for (const res of open) res.destroy()
  return {
    streams: opts.streams,
    events,
    wallMs,
    eventsPerS: (events / wallMs) * 1000,
    cpuUsPerEvent:
      cpu0 !== undefined && cpu1 !== undefined && events > 0
        ? ((cpu1 - cpu0) * 1000) / events
        : undefined,
  }
}

export type WebhookResult = {
  executions: number
  deliveries: number
  wallMs: number
  deliveriesPerS: number
  cpuUsPerDelivery: number | undefined
}

/** `executions` Turns, a receiver that answers 204 at once, one advance: deliveries per second. */
export async function webhookDeliveries(mock: Target, executions: number): Promise<WebhookResult> {
  await prepareWorld(mock.url)
  let deliveries = 0
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      deliveries++
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  try {
    const fixtures = (await control(mock.url, 'GET', '/fixtures')).json as {
      projects: { id: string; owner_token: string; api_keys: { key: string }[] }[]
    }
    const project = fixtures.projects.find((p) => p.api_keys.some((k) => k.key === KEY))!
    const hook = await post(
      mock.url,
      `/api/runtime/projects/${project.id}/webhooks`,
      JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/h` }),
      { Authorization: `Bearer ${project.owner_token}`, 'Content-Type': 'application/json' },
    )
    if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status}`)
    for (let i = 0; i < executions; i++) {
      const r = await post(mock.url, `/v1/deployments/${DEPLOYMENT}/sessions`, SESSION_BODY, {
        ...JSON_AUTH,
        'Idempotency-Key': `hook-${i}`,
      })
      if (r.status !== 202) throw new Error(`webhook session: ${r.status}`)
    }
    const cpu0 = mock.cpuMs()
    const start = process.hrtime.bigint()
    await control(mock.url, 'POST', '/clock/advance', { seconds: executions * 3 + 60 })
    let seen = -1
    while (seen !== deliveries) {
      seen = deliveries
      await new Promise((r) => setTimeout(r, 250))
    }
    const wallMs = ms(start) - 250
    const cpu1 = mock.cpuMs()
    return {
      executions,
      deliveries,
      wallMs,
      deliveriesPerS: (deliveries / wallMs) * 1000,
      cpuUsPerDelivery:
        cpu0 !== undefined && cpu1 !== undefined && deliveries > 0
          ? ((cpu1 - cpu0) * 1000) / deliveries
          : undefined,
    }
  } finally {
    receiver.close()
  }
}
