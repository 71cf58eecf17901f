/**
 * Sessions and Turns through their life (Sessions and Turns; States and transitions; Concurrency; SU budgets):
 * receipts, reads, one Turn at a time, closing, deleting, time limits, revocation and scripted outcomes.
 */
import { expect, it } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import {
  createSession,
  newIdempotencyKey,
  type SessionReceipt,
} from '../../support/session-create.js'
import { waitUntilEnded } from '../../support/poll.js'
import { expectContentBlocked } from '../../support/runs.js'
import { assumedRule, mockOnly } from '../../support/skip.js'
import { openRaw } from '../events/sse-support.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

type Turn = {
  id: string
  session_id: string
  status: string
  usage: { status: string; total_su: number | null }
  error: { code: string } | null
  started_at?: string | null
  completed_at?: string | null
  outputs: { type: string; visibility: string }[]
  next_cursor: string | null
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELED', 'EXPIRED']
const text = (t = 'Summarise the quarterly report') => ({ input: [{ type: 'TEXT', text: t }] })

async function accepted(
  body: unknown = text(),
  opts: Parameters<typeof createSession>[2] = {},
): Promise<SessionReceipt> {
  const res = await createSession(target, body, opts)
  expect(res.status, res.text).toBe(202)
  return res.body as SessionReceipt
}
const readTurn = async (r: { status_url: string }, key = target.world.keys.full): Promise<Turn> => {
  const res = await target.api.get(r.status_url, { key })
  expect(res.status, res.text).toBe(200)
  return res.body as Turn
}
const post = (
  path: string,
  body: unknown = {},
  key = target.world.keys.full,
): Promise<ApiResponse> => target.api.post(path, body, { key, idem: newIdempotencyKey() })

it(`${req('STATE-005', 'SES-001', 'SES-002', 'SES-003')} answers a valid creation with a QUEUED receipt whose urls lead to the Turn and the stream`, async () => {
  const r = await accepted()
  expect(r.status).toBe('QUEUED')
  expect(r.status_url).toBe(`/v1/sessions/${r.session_id}/turns/${r.turn_id}`)
  expect(r.events_url).toBe(`/v1/sessions/${r.session_id}/events`)
  const turn = await readTurn(r)
  expect(turn.id).toBe(r.turn_id)
  expect(turn.session_id).toBe(r.session_id)
})

it(`${req('SES-017', 'SES-018', 'SES-019', 'SES-021')} shows a Turn with its status, usage PENDING without total, and no completion time before the end`, async () => {
  const turn = await readTurn(await accepted())
  expect(['QUEUED', 'RUNNING']).toContain(turn.status)
  expect(turn.usage).toMatchObject({ status: 'PENDING', total_su: null })
  expect(turn.completed_at ?? null).toBeNull()
})

it(`${req('STATE-002', 'SES-019', 'SES-020')} ends the default scenario SUCCEEDED with a FINAL output and usage FINAL with a number`, async (ctx) => {
  const control = mockOnly(ctx, target, 'the default scenario runs on virtual time')
  const r = await accepted()
  await control.advance(5)
  const turn = await readTurn(r)
  expect(turn.status).toBe('SUCCEEDED')
  expect(turn.error).toBeNull()
  expect(turn.usage.status).toBe('FINAL')
  expect(turn.usage.total_su).toBeGreaterThan(0)
  expect(turn.outputs.some((o) => o.visibility === 'FINAL')).toBe(true)
  await control.advance(3600)
  expect((await readTurn(r)).status).toBe('SUCCEEDED')
})

it(`${req('STATE-024')} refuses input while a Turn runs with 409 SESSION_BUSY, and accepts it once the Turn ended`, async (ctx) => {
  assumedRule(ctx, target, 'the path to add input to a Session is not shown')
  const control = mockOnly(ctx, target, 'the Turn must end on virtual time')
  const r = await accepted()
  expectError(await post(`/v1/sessions/${r.session_id}/turns`, text('more')), 'SESSION_BUSY')
  await control.advance(5)
  expect((await post(`/v1/sessions/${r.session_id}/turns`, text('more'))).status).toBe(202)
})

it(`${req('ERR-068', 'RETRY-004')} answers 503 SESSION_UPDATING with Retry-After while a Turn's cancel is confirmed; the same key then succeeds`, async (ctx) => {
  assumedRule(
    ctx,
    target,
    'the trigger of SESSION_UPDATING and the Turn cancel and input paths are not shown',
  )
  const control = mockOnly(ctx, target, 'the cancel is confirmed on virtual time')
  const r = await accepted()
  await control.advance(2)
  const cancel = await post(`/v1/sessions/${r.session_id}/turns/${r.turn_id}/cancel`)
  expect(cancel.status, cancel.text).toBe(202)
  const idem = newIdempotencyKey('updating')
  const send = () =>
    target.api.post(`/v1/sessions/${r.session_id}/turns`, text('more'), {
      key: target.world.keys.full,
      idem,
    })
  const updating = await send()
  expectError(updating, 'SESSION_UPDATING')
  expect(updating.headers['retry-after']).toBe('1')
  expectError(await post(`/v1/sessions/${r.session_id}/close`), 'SESSION_UPDATING')
  await control.advance(1)
  const accepted2 = await send()
  expect(accepted2.status, accepted2.text).toBe(202)
})

it(`${req('STATE-025', 'SES-024')} refuses input and files in a closed Session with 409 SESSION_CLOSED`, async (ctx) => {
  assumedRule(ctx, target, 'the paths to close a Session and add input are not shown')
  const control = mockOnly(ctx, target, 'the Turn must end before closing')
  const r = await accepted()
  await control.advance(5)
  const closed = await post(`/v1/sessions/${r.session_id}/close`)
  expect(closed.status).toBe(200)
  expect((closed.body as { status: string }).status).toBe('CLOSED')
  expectError(await post(`/v1/sessions/${r.session_id}/turns`, text('more')), 'SESSION_CLOSED')
  const upload = await target.api.upload(
    `/v1/sessions/${r.session_id}/files`,
    { content: 'hi\n', filename: 'hi.txt', contentType: 'text/plain' },
    { key: target.world.keys.full, idem: newIdempotencyKey() },
  )
  expectError(upload, 'SESSION_CLOSED')
})

it(`${req('EP-006', 'ERR-014')} closes a Session without an Idempotency-Key (close is not a create, input, cancel or upload request) and honours one when sent`, async (ctx) => {
  assumedRule(ctx, target, 'the path to close a Session is not shown')
  const control = mockOnly(ctx, target, 'the Turn must end before closing')
  const r = await accepted()
  await control.advance(5)
  const bare = await target.api.post(
    `/v1/sessions/${r.session_id}/close`,
    {},
    {
      key: target.world.keys.full,
    },
  )
  expect(bare.status, bare.text).toBe(200)
  expect((bare.body as { status: string }).status).toBe('CLOSED')
  const other = await accepted()
  await control.advance(5)
  const idem = newIdempotencyKey('close')
  const path = `/v1/sessions/${other.session_id}/close`
  const first = await target.api.post(path, {}, { key: target.world.keys.full, idem })
  expect(first.status, first.text).toBe(200)
  const replay = await target.api.post(path, {}, { key: target.world.keys.full, idem })
  expect(replay.status).toBe(200)
  expect(replay.body).toEqual(first.body)
  expect(replay.headers['idempotent-replayed']).toBe('true')
})

it(`${req('STATE-020', 'SES-025', 'DEL-001', 'DEL-002')} deletes a Session with a 202 receipt, cancels its running Turn with SESSION_DELETED and blocks reads at once`, async (ctx) => {
  const control = mockOnly(
    ctx,
    target,
    'the Turn status after deletion is read through the store of the mock',
  )
  await control.queueScenario(target.world.deployments.active, 'slow')
  const r = await accepted()
  await control.advance(2)
  const idem = newIdempotencyKey('delete')
  const del = await target.api.delete(
    `/v1/sessions/${r.session_id}`,
    {},
    { key: target.world.keys.full, idem },
  )
  expect(del.status).toBe(202)
  expect(JSON.stringify(del.body)).not.toContain('Summarise')
  expectError(await target.api.get(r.status_url, { key: target.world.keys.full }), 'NOT_FOUND')
  const again = await target.api.delete(
    `/v1/sessions/${r.session_id}`,
    {},
    { key: target.world.keys.full, idem },
  )
  expect(again.status).toBe(202)
  expect(again.body).toEqual(del.body)
})

it(`${req('SES-025', 'DEL-001', 'DEL-002')} deletes a Session with a 202 receipt without content, blocks its reads at once, and returns the same receipt to a resend`, async () => {
  const r = await accepted(text('Summarise the deletion test'))
  const idem = newIdempotencyKey('delete')
  const path = `/v1/sessions/${r.session_id}`
  const del = await target.api.delete(path, {}, { key: target.world.keys.full, idem })
  expect(del.status, del.text).toBe(202)
  expect(JSON.stringify(del.body)).not.toContain('Summarise')
  await expectContentBlocked(
    target,
    await target.api.get(r.status_url, { key: target.world.keys.full }),
  )
  const again = await target.api.delete(path, {}, { key: target.world.keys.full, idem })
  expect(again.status).toBe(202)
  expect(again.body).toEqual(del.body)
})

it(`${req('STATE-006', 'CONC-001')} lets 2 executions run per Project, keeps the third QUEUED and expires it with QUEUE_TIMEOUT when its queue time passes`, async (ctx) => {
  const control = mockOnly(ctx, target, 'needs scripted slow executions and virtual time')
  await control.queueScenario(target.world.deployments.active, 'slow', 3)
  const a = await accepted()
  const b = await accepted()
  const c = await accepted({ ...text(), limits: { queue_seconds: 30 } })
  await control.advance(10)
  expect((await readTurn(a)).status).toBe('RUNNING')
  expect((await readTurn(b)).status).toBe('RUNNING')
  expect((await readTurn(c)).status).toBe('QUEUED')
  await control.advance(25)
  const expired = await readTurn(c)
  expect(expired.status).toBe('EXPIRED')
  expect(expired.error?.code).toBe('QUEUE_TIMEOUT')
})

it(`${req('CONC-001')} starts a waiting execution when a running one ends`, async (ctx) => {
  const control = mockOnly(ctx, target, 'needs scripted executions and virtual time')
  await control.queueScenario(target.world.deployments.active, 'slow', 2)
  const a = await accepted({ ...text(), limits: { execution_seconds: 20 } })
  await accepted()
  const c = await accepted()
  await control.advance(10)
  expect((await readTurn(c)).status).toBe('QUEUED')
  await control.advance(15) // a fails its time limit at 21 s; c is admitted and runs its default script
  expect((await readTurn(a)).status).toBe('FAILED')
  await control.advance(5)
  expect((await readTurn(c)).status).toBe('SUCCEEDED')
})

it(`${req('STATE-007')} fails a Turn running past execution_seconds with EXECUTION_TIMEOUT`, async (ctx) => {
  const control = mockOnly(ctx, target, 'needs the slow scenario and virtual time')
  await control.queueScenario(target.world.deployments.active, 'slow')
  const r = await accepted({ ...text(), limits: { execution_seconds: 60 } })
  await control.advance(30)
  expect((await readTurn(r)).status).toBe('RUNNING')
  await control.advance(40)
  const turn = await readTurn(r)
  expect(turn.status).toBe('FAILED')
  expect(turn.error?.code).toBe('EXECUTION_TIMEOUT')
  expect(turn.usage.status).toBe('FINAL')
})

it(`${req('CONC-002')} refuses an acceptance beyond the Project's concurrency limit with 429 CONCURRENCY_LIMIT`, async (ctx) => {
  const control = mockOnly(
    ctx,
    target,
    'where the limit starts is an assumption of the mock (2 running, 10 waiting)',
  )
  await control.queueScenario(target.world.deployments.active, 'slow', 20)
  let last: ApiResponse | undefined
  const code = () => (last?.body as { error?: { code: string } }).error?.code
  for (let accepted = 0; accepted < 13;) {
    // max_su 1 keeps the reservations far below the Project's daily budget.
    last = await createSession(target, { ...text(), limits: { max_su: 1 } }, { pace: false })
    if (code() === 'RATE_LIMITED') await control.advance(60)
    else if (last.status === 202) accepted++
    else break
  }
  expectError(last!, 'CONCURRENCY_LIMIT')
  expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0)
})

it(`${req('STATE-019')} cancels a running Turn with AUTHORIZATION_REVOKED when its key is revoked`, async (ctx) => {
  const control = mockOnly(ctx, target, 'revoking a key is a management action')
  await control.queueScenario(target.world.deployments.active, 'slow')
  const r = await accepted(text(), { key: target.world.keys.oneDeployment })
  await control.advance(2)
  const { canceled } = await control.revokeKey(target.world.keys.oneDeployment!)
  expect(canceled).toContain(r.turn_id)
  const turn = await readTurn(r)
  expect(turn.status).toBe('CANCELED')
  expect(turn.error?.code).toBe('AUTHORIZATION_REVOKED')
  expectError(
    await target.api.get(r.status_url, { key: target.world.keys.oneDeployment }),
    'INVALID_API_KEY',
  )
})

it(`${req('STATE-019')} cancels a running Turn with AUTHORIZATION_REVOKED when its key expires on the clock`, async (ctx) => {
  const control = mockOnly(ctx, target, 'key expiry on virtual time')
  await control.queueScenario(target.world.deployments.active, 'slow')
  const r = await accepted(text(), { key: target.world.keys.oneDeployment })
  const now = Date.parse((await control.clock()).now)
  await control.expireKey(target.world.keys.oneDeployment!, new Date(now + 60_000).toISOString())
  await control.advance(30)
  expect((await readTurn(r)).status).toBe('RUNNING')
  await control.advance(31)
  const turn = await readTurn(r)
  expect(turn.status).toBe('CANCELED')
  expect(turn.error?.code).toBe('AUTHORIZATION_REVOKED')
})

it(`${req('STATE-019')} cancels running Turns of a retired Deployment, which then refuses new Sessions with DEPLOYMENT_UNAVAILABLE`, async (ctx) => {
  const control = mockOnly(ctx, target, 'retiring a Deployment is a management action')
  await control.queueScenario(target.world.deployments.active, 'slow')
  const r = await accepted()
  await control.advance(2)
  await control.retireDeployment(target.world.deployments.active)
  expect((await readTurn(r)).error?.code).toBe('AUTHORIZATION_REVOKED')
  expectError(await createSession(target, text()), 'DEPLOYMENT_UNAVAILABLE')
})

it(`${req('DEP-003')} refuses a Session on a RETIRED Deployment with 409 DEPLOYMENT_UNAVAILABLE`, async (ctx) => {
  if (!target.world.deployments.retired) ctx.skip('the target has no RETIRED Deployment')
  expectError(
    await createSession(target, text(), { deploymentId: target.world.deployments.retired }),
    'DEPLOYMENT_UNAVAILABLE',
  )
})

for (const [scenario, status, code] of [
  ['fail', 'FAILED', 'EXECUTION_FAILED'],
  ['needs-action', 'FAILED', 'ACTION_REQUIRED_UNSUPPORTED'],
  ['credential-leak', 'FAILED', 'OUTPUT_CONTAINS_CREDENTIALS'],
  ['over-budget', 'FAILED', 'BUDGET_EXCEEDED'],
] as const) {
  const ids = {
    fail: ['ERR-010'],
    'needs-action': ['STATE-022'],
    'credential-leak': ['STATE-017'],
    'over-budget': ['BUD-001'],
  }[scenario]
  it(`${req(...ids)} ends the ${scenario} scenario ${status} with ${code} in the Turn detail`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted outcome')
    await control.queueScenario(target.world.deployments.active, scenario)
    const r = await accepted()
    await control.advance(10)
    const turn = await readTurn(r)
    expect(turn.status).toBe(status)
    expect(turn.error?.code).toBe(code)
    expect(TERMINAL).toContain(turn.status)
    if (scenario === 'over-budget') expect(turn.usage.total_su).toBeLessThanOrEqual(100)
  })
}

it(`${req('STATE-003', 'IDEM-008')} answers a resend of an ended execution's key with the same receipt and no new Turn`, async (ctx) => {
  const control = mockOnly(ctx, target, 'the execution must end on virtual time')
  await control.queueScenario(target.world.deployments.active, 'fail')
  const idem = newIdempotencyKey()
  const first = await accepted(text(), { idem })
  await control.advance(10)
  const again = await accepted(text(), { idem })
  expect(again).toEqual(first)
  expect((await readTurn(first)).status).toBe('FAILED')
})

it(`${req('RET-003')} answers 410 SESSION_EXPIRED after 30 idle days`, async (ctx) => {
  const control = mockOnly(ctx, target, 'needs 30 days of virtual time')
  const r = await accepted()
  await control.advance(30 * 24 * 3600 + 10)
  expectError(
    await target.api.get(r.status_url, { key: target.world.keys.full }),
    'SESSION_EXPIRED',
  )
})

it(`${req('SES-012')} applies the default limits: a Turn may run an hour but not longer`, async (ctx) => {
  const control = mockOnly(ctx, target, 'needs the slow scenario and an hour of virtual time')
  await control.queueScenario(target.world.deployments.active, 'slow')
  const r = await accepted()
  await control.advance(3590)
  expect((await readTurn(r)).status).toBe('RUNNING')
  await control.advance(20)
  expect((await readTurn(r)).error?.code).toBe('EXECUTION_TIMEOUT')
})

it(`${req('SVC-001', 'SVC-003')} creates a Session with its first Turn in one request, and a Turn read under another Session's path is 404`, async () => {
  const a = await accepted()
  const b = await accepted()
  expect(a.session_id).not.toBe(b.session_id)
  expectError(
    await target.api.get(`/v1/sessions/${b.session_id}/turns/${a.turn_id}`, {
      key: target.world.keys.full,
    }),
    'NOT_FOUND',
  )
})

it(`${req('SES-016')} refuses a delete body with any property with INVALID_INPUT`, async () => {
  const r = await accepted()
  const res = await target.api.delete(
    `/v1/sessions/${r.session_id}`,
    { reason: 'tidy up' },
    { key: target.world.keys.full, idem: newIdempotencyKey() },
  )
  expectError(res, 'INVALID_INPUT')
  expect((await target.api.get(r.status_url, { key: target.world.keys.full })).status).toBe(200)
})

it(`${req('SES-026')} refuses DELETE of a Session without an Idempotency-Key with 422 INVALID_IDEMPOTENCY_KEY`, async () => {
  const r = await accepted()
  expectError(
    await target.api.delete(`/v1/sessions/${r.session_id}`, {}, { key: target.world.keys.full }),
    'INVALID_IDEMPOTENCY_KEY',
  )
})

it(`${req('SES-023')} accepts a file upload into an active Session with 201 FileReceipt`, async () => {
  const r = await accepted()
  const res = await target.api.upload(
    `/v1/sessions/${r.session_id}/files`,
    { content: 'notes\n', filename: 'notes.txt', contentType: 'text/plain' },
    { key: target.world.keys.full, idem: newIdempotencyKey() },
  )
  expect(res.status, res.text).toBe(201)
  expect((res.body as { status: string }).status).toBe('READY')
})

it(`${req('OUT-003', 'OUT-005')} shows a produced TEXT output READY with item_id and its text`, async (ctx) => {
  const control = mockOnly(ctx, target, 'the output is produced on virtual time')
  const r = await accepted()
  await control.advance(5)
  const turn = await readTurn(r)
  const out = turn.outputs[0] as unknown as {
    type: string
    availability: string
    item_id: string
    text: string
  }
  expect(out.type).toBe('TEXT')
  expect(out.availability).toBe('READY')
  expect(typeof out.item_id).toBe('string')
  expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(64 * 1024)
})

it(`${req('OUT-001', 'OUT-003', 'OUT-005')} gives every output item of an ended Turn its fields; a READY TEXT item has item_id and its text inline`, async (ctx) => {
  const r = await accepted()
  // A mock runs `succeed` on virtual time; a real Turn is polled until it ends (support/poll.ts).
  const status = await waitUntilEnded(target, r.status_url, { mockAdvanceS: 6 })
  if (status !== 'SUCCEEDED') ctx.skip(`the Turn ended ${status}, not SUCCEEDED`)
  const turn = await readTurn(r)
  if (target.control) expect(turn.outputs.length).toBeGreaterThan(0)
  for (const item of turn.outputs as unknown as Record<string, unknown>[]) {
    expect(Object.keys(item)).toEqual(
      expect.arrayContaining(['id', 'key', 'type', 'visibility', 'availability', 'error']),
    )
    expect(['TEXT', 'JSON', 'FILE', 'URL']).toContain(item.type)
    if (item.availability !== 'READY' || item.type !== 'TEXT' || !('text' in item)) continue
    expect(typeof item.item_id).toBe('string')
    expect(typeof item.text).toBe('string')
    expect(Buffer.byteLength(item.text as string)).toBeLessThanOrEqual(64 * 1024)
  }
})

it(`${req('RES-003', 'EP-001')} serves the receipt's relative status_url and events_url appended to the base URL; /v1 answers are JSON`, async () => {
  const r = await accepted()
  for (const url of [r.status_url, r.events_url]) expect(url.startsWith('/')).toBe(true)
  const turn = await target.api.get(r.status_url, { key: target.world.keys.full })
  expect(turn.status, turn.text).toBe(200)
  expect(turn.headers['content-type']).toMatch(/^application\/json\b/)
  const stream = await openRaw(target.baseUrl, r.events_url, { key: target.world.keys.full })
  try {
    expect(stream.status).toBe(200)
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream\b/)
  } finally {
    stream.close()
  }
})

it(`${req('ERR-106', 'SES-020')} ends a Turn FAILED with OUTPUT_MISSING when a result the Deployment's contract requires is not produced`, async (ctx) => {
  const control = mockOnly(ctx, target, 'a scripted Turn that produces no output')
  await control.queueScenario(target.world.deployments.active, 'missing-output')
  const r = await accepted()
  await control.advance(10)
  const turn = await readTurn(r)
  expect(turn.status).toBe('FAILED')
  expect(turn.error?.code).toBe('OUTPUT_MISSING')
  expect(turn.usage.status).toBe('FINAL')
})
