/**
 * A failure rehearsal against a running mock (`npm start`, then `npm run rehearse`): the same fault schedule
 * (an unanswered Session creation, a 429 with Retry-After on a Turn read, an SSE stream cut after one event)
 * is run twice, once with a deliberately naive client and once with the reference client (client/), and the
 * referee's report (GET /_mock/referee) is printed after each. The clock is switched to manual so that both
 * clients wait on virtual time. The mock is reset before each run and at the end.
 */
import { parseArgs } from 'node:util'
import { ReferenceClient } from '../client/index.js'
import { NaiveClient } from './lib/naive-client.js'

const USAGE = `usage: npm run rehearse -- [--base-url http://127.0.0.1:4010] [--key sk_test_a_full]
  [--deployment aaaaaaaa-d000-4000-8000-000000000001]   (MOCK_CONTROL_TOKEN is sent to /_mock when set)`

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string', default: 'http://127.0.0.1:4010' },
    key: { type: 'string', default: 'sk_test_a_full' },
    deployment: { type: 'string', default: 'aaaaaaaa-d000-4000-8000-000000000001' },
    help: { type: 'boolean', default: false },
  },
})
if (values.help) {
  console.log(USAGE)
  process.exit(0)
}
const baseUrl = values['base-url'].replace(/\/+$/, '')
const token = process.env.MOCK_CONTROL_TOKEN

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${baseUrl}/_mock${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (res.status >= 300)
    throw new Error(`${method} /_mock${path}: ${res.status} ${await res.text()}`)
  return res.json()
}

const sleep = async (ms: number) => {
  if (ms > 0) await control('POST', '/clock/advance', { seconds: ms / 1000 })
}

const SCHEDULE = [
  { match: { operation: 'createSession' }, action: { drop: 'after' }, times: 1 },
  {
    match: { operation: 'getTurn' },
    action: { error: 'RATE_LIMITED', retry_after_s: 3 },
    times: 1,
  },
  {
    match: { operation: 'streamSessionEvents' },
    action: { stream: 'close', after_events: 1 },
    times: 1,
  },
]

async function fresh(): Promise<void> {
  await control('POST', '/reset', {})
  await control('POST', '/clock', { mode: 'manual' })
  for (const rule of SCHEDULE) await control('POST', '/faults', rule)
}

type Report = { violations: { rule: string; requirement_id: string; requests: unknown[] }[] }

async function report(title: string): Promise<void> {
  const { violations } = (await control('GET', '/referee')) as Report
  console.log(`\n${title}: ${violations.length} referee finding(s)`)
  for (const v of violations)
    console.log(`  ${v.requirement_id}  ${v.rule}  (${v.requests.length} request(s))`)
}

console.log(`fault schedule on ${baseUrl}:`)
for (const rule of SCHEDULE) console.log(`  ${JSON.stringify(rule)}`)

await fresh()
await new NaiveClient({ baseUrl, apiKey: values.key, deploymentId: values.deployment, sleep })
  .job()
  .catch((error: unknown) => console.log(`naive client failed: ${String(error)}`))
await report('naive client')

await fresh()
const client = new ReferenceClient({ baseUrl, apiKey: values.key, sleep })
const receipt = await client.createSession(values.deployment, {
  input: [{ type: 'TEXT', text: 'the job' }],
})
const turn = await client.waitForTurn(receipt.status_url)
let events = 0
await client.followEvents(receipt.events_url, (e) => {
  events += 1
  return e.type === 'turn.completed' || e.type === 'turn.failed'
})
console.log(`\nreference client: Turn ${turn.status}, ${events} event(s) followed once each`)
await report('reference client')
await control('POST', '/reset', {})
