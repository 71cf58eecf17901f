/**
 * The receipt of a request that created an execution is carried by that execution's row (schema 330,
 * store/carried-receipts.ts): the creation writes no receipt row, and a replay rebuilds the answer from the
 * row. The replay must still answer the very status and text the creation sent, whoever reads the store
 * (the instance that wrote it, or one that opened the file later), and a key used again once its receipt
 * stopped holding must answer with its newer receipt, not the older one the store still holds.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { offeringReceipt } from './carried-receipts.js'
import { openDb } from './db.js'
import { insertExecution } from './executions.js'
import { newExecution } from './test-stores.js'

const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const WF = 'aaaaaaaa-f000-4000-8000-000000000001'
const H = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }
const TURN_BODY = JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } })

const dirs: string[] = []
const open: Mock[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true })
})

async function fileMock(): Promise<{ file: string; mock: Mock }> {
  const dir = mkdtempSync(join(tmpdir(), 'carried-'))
  dirs.push(dir)
  const file = join(dir, 'state.db')
  const mock = await createMock({ db: file })
  open.push(mock)
  return { file, mock }
}

async function reopen(file: string): Promise<Mock> {
  const mock = await createMock({ db: file })
  open.push(mock)
  return mock
}

type Sent = { status: number; text: string; replayed: string | null }

const post = async (mock: Mock, path: string, key: string, body: string): Promise<Sent> => {
  const res = await mock.app.request(path, {
    method: 'POST',
    headers: { ...H, 'Idempotency-Key': key },
    body,
  })
  return {
    status: res.status,
    text: await res.text(),
    replayed: res.headers.get('Idempotent-Replayed'),
  }
}

const receiptRows = (mock: Mock): number =>
  (mock.deps.db.raw.prepare('SELECT COUNT(*) AS n FROM idempotency').get() as { n: number }).n

it('[IDEM-001] carries the receipt of createSession, addTurn and createRun in the execution’s row and replays the very answer sent, also from the store reopened', async () => {
  const { file, mock } = await fileMock()
  const sessions = `/v1/deployments/${D}/sessions`
  const created = await post(mock, sessions, 'carried-session', TURN_BODY)
  expect(created.status).toBe(202)
  const sessionId = (JSON.parse(created.text) as { session_id: string }).session_id
  // The first Turn ends before the second is added.
  await mock.clock.advance(600)
  const turns = `/v1/sessions/${sessionId}/turns`
  const added = await post(mock, turns, 'carried-turn', TURN_BODY)
  expect(added.status).toBe(202)
  const wf = (await (await mock.app.request(`/v1/workflows/${WF}`, { headers: H })).json()) as {
    published_version: number
  }
  const runs = `/v1/workflows/${WF}/runs`
  const runBody = JSON.stringify({ published_version: wf.published_version, input: { topic: 'x' } })
  const run = await post(mock, runs, 'carried-run', runBody)
  expect(run.status).toBe(202)
  // No receipt row: each is carried by its execution.
  expect(receiptRows(mock)).toBe(0)
  const sent: [string, string, string, Sent][] = [
    [sessions, 'carried-session', TURN_BODY, created],
    [turns, 'carried-turn', TURN_BODY, added],
    [runs, 'carried-run', runBody, run],
  ]
  for (const target of [mock, await reopen(file)]) {
    for (const [path, key, body, first] of sent) {
      const again = await post(target, path, key, body)
      expect(again, key).toEqual({ status: first.status, text: first.text, replayed: 'true' })
      // The same key with another body is a conflict (IDEM-003): the carried fingerprint is the request's.
      const other = await post(target, path, key, body.replace('"x"', '"y"'))
      expect(other.status, key).toBe(409)
    }
  }
})

it('[IDEM-001] [RET-001] answers a key used again after its carried receipt stopped holding with the newer receipt, also from the store reopened', async () => {
  const { file, mock } = await fileMock()
  const sessions = `/v1/deployments/${D}/sessions`
  const first = await post(mock, sessions, 'again', TURN_BODY)
  expect(first.status).toBe(202)
  // The Turn ends, then the receipt's 24 hours pass: the key creates again, with another body.
  await mock.clock.advance(25 * 3600)
  const body = TURN_BODY.replace('"x"', '"second"')
  const second = await post(mock, sessions, 'again', body)
  expect(second.status).toBe(202)
  expect(second.replayed).toBeNull()
  expect(JSON.parse(second.text).session_id).not.toBe(JSON.parse(first.text).session_id)
  for (const target of [mock, await reopen(file)]) {
    expect(await post(target, sessions, 'again', body)).toEqual({
      status: 202,
      text: second.text,
      replayed: 'true',
    })
    expect((await post(target, sessions, 'again', TURN_BODY)).status).toBe(409)
  }
})

it('[IDEM-001] offers the receipt to the first execution inserted only, and forgets a carrier whose insert was rolled back (the route then stores a receipt row)', () => {
  const db = openDb()
  try {
    const offer = { key: 'k', fingerprint: 'f', expires_at: 86_400_000 }
    const carriedBy = () =>
      db.raw.prepare('SELECT id FROM executions WHERE receipt_key IS NOT NULL').all()
    // Two inserts while the offer stands: the first carries it, the second does not.
    const both = db.tx(() =>
      offeringReceipt(db, offer, () => {
        insertExecution(db, newExecution({ id: 'e1' }))
        insertExecution(db, newExecution({ id: 'e2' }))
      }),
    )
    expect(both.carrier?.id).toBe('e1')
    expect(carriedBy()).toEqual([{ id: 'e1' }])
    // The carrier's insert undone by a savepoint that rolls back: no carrier, nothing carried.
    const undone = db.tx(() =>
      offeringReceipt(db, { ...offer, key: 'k2' }, () => {
        try {
          db.tx(() => {
            insertExecution(db, newExecution({ id: 'e3' }))
            throw new Error('undo')
          })
        } catch {
          // the savepoint rolled back
        }
      }),
    )
    expect(undone.carrier).toBeUndefined()
    expect(carriedBy()).toEqual([{ id: 'e1' }])
    // Nothing on offer outside offeringReceipt.
    db.tx(() => insertExecution(db, newExecution({ id: 'e4' })))
    expect(carriedBy()).toEqual([{ id: 'e1' }])
  } finally {
    db.close()
  }
})
