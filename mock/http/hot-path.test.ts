/**
 * The hot path (auth, rate limit, handler, JSON) stays O(1) in the store size: every SQL statement a hot
 * request runs is a prepared statement that searches an index (never a full table scan), and the number of
 * statements does not grow with the number of Sessions, Turns and events stored.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'

let mock: Mock
let statements: string[]
const H = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }
const D = 'aaaaaaaa-d000-4000-8000-000000000001'

beforeEach(() => start({ rateLimits: true }))
afterEach(() => mock.close())

/** A mock whose statements are recorded in `statements`. */
async function start(opts: { rateLimits: boolean }): Promise<void> {
  mock = await createMock(opts)
  const db = mock.deps.db
  const stmt = db.stmt.bind(db)
  statements = []
  ;(db as { stmt: typeof db.stmt }).stmt = (sql: string) => {
    statements.push(sql)
    return stmt(sql)
  }
}

let n = 0
async function createSession(): Promise<{ status_url: string }> {
  const res = await mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: { ...H, 'Idempotency-Key': `hot-${n++}` },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } }),
  })
  expect(res.status).toBe(202)
  return (await res.json()) as { status_url: string }
}

/** The statements one request runs. */
async function traced(fn: () => unknown): Promise<string[]> {
  statements.length = 0
  await fn()
  return [...statements]
}

const plan = (sql: string): string => {
  const params = (sql.match(/\?|@\w+/g) ?? []).length
  const named = /@\w+/.test(sql)
  const db = mock.deps.db.raw
  const rows = named
    ? (db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(Object.fromEntries((sql.match(/@(\w+)/g) ?? []).map((p) => [p.slice(1), 'x']))) as {
        detail: string
      }[])
    : (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array<string>(params).fill('x')) as {
        detail: string
      }[])
  return rows.map((r) => r.detail).join(' | ')
}

it('reads a Turn, lists Deployments and creates a Session with index searches only', async () => {
  const r = await createSession()
  await mock.clock.advance(5)
  const sqls = new Set([
    ...(await traced(() => mock.app.request(r.status_url, { headers: H }))),
    ...(await traced(() => mock.app.request('/v1/deployments', { headers: H }))),
    ...(await traced(() => createSession())),
  ])
  const scans = [...sqls]
    .filter((sql) => /^\s*(SELECT|UPDATE|DELETE)/i.test(sql))
    // SCAN CONSTANT ROW: the one row a SELECT without FROM gives, not a table's.
    .filter((sql) => /\bSCAN\b(?! CONSTANT ROW)/.test(plan(sql)))
  expect(scans).toEqual([])
})

it('runs as many statements for a Turn read with 1 Session stored as with 120', async () => {
  const first = await createSession()
  await mock.clock.advance(5)
  // Each read is traced at its second run (a polled read): which reads the first one finds kept depends on
  // what ran before it (db.cached), not on how much is stored.
  const read = () => mock.app.request(first.status_url, { headers: H })
  await read()
  const small = await traced(read)
  for (let i = 0; i < 120; i++) {
    await createSession()
    if (i % 8 === 7) await mock.clock.advance(61) // Sessions finish; the accept window opens again
  }
  await mock.clock.advance(61)
  await read()
  const large = await traced(read)
  expect(large.length).toBe(small.length)
})

it('creates a Session that waits for a slot in a bounded number of statements, however many wait', async () => {
  // Both slots taken; then every creation waits. The waiting cap and the SU checks read the Project's counts
  // (kept in memory, store/project-load.ts), not its open executions, so the count is the same with 1 waiting
  // as with 9. Without call-rate limits: the statements counted are the creation's, once its reads are kept:
  // the Session's and the Turn's inserts (the Turn's row carries the receipt, schema 330).
  mock.close()
  await start({ rateLimits: false })
  const counts: number[] = []
  for (let i = 0; i < 11; i++) {
    const sqls = await traced(() => createSession())
    if (i >= 2) counts.push(sqls.length)
  }
  // The first waiting creations read what later ones find kept (a kept read is kept at its second sighting:
  // the Project's queue timeout, execution/queue-timeouts.ts); from then on the count is the same.
  expect(new Set(counts.slice(2)).size).toBe(1)
  expect(Math.max(...counts)).toBeLessThanOrEqual(8)
  expect(counts.at(-1)).toBe(2)
})

/** The statement's bytecode opcodes (EXPLAIN), with placeholder parameters. */
const opcodes = (sql: string): string[] => {
  const db = mock.deps.db.raw
  const names = sql.match(/@(\w+)/g)
  const rows = (
    names
      ? db.prepare(`EXPLAIN ${sql}`).all(Object.fromEntries(names.map((p) => [p.slice(1), 'x'])))
      : db
          .prepare(`EXPLAIN ${sql}`)
          .all(...Array<string>((sql.match(/\?/g) ?? []).length).fill('x'))
  ) as { opcode: string }[]
  return rows.map((r) => r.opcode)
}

it('creates a Session and reads a Turn without a temporary table: no statement opens an ephemeral b-tree', async () => {
  // An ephemeral b-tree (INSERT ... RETURNING keeps its rows in one, as do some subqueries) is a pager and a
  // page cache built and torn down on every run.
  const r = await createSession()
  await mock.clock.advance(5)
  const sqls = new Set([
    ...(await traced(() => mock.app.request(r.status_url, { headers: H }))),
    ...(await traced(() => createSession())),
  ])
  const ephemeral = [...sqls].filter((sql) => opcodes(sql).includes('OpenEphemeral'))
  expect(ephemeral).toEqual([])
})

it('[CONC-001] numbers executions in acceptance order (the order waiting ones are admitted) without RETURNING: seq is the row id, above every stored seq', async () => {
  mock.close()
  await start({ rateLimits: false })
  const raw = mock.deps.db.raw
  const rows = () =>
    raw.prepare('SELECT rowid AS rowid, seq, id FROM executions ORDER BY rowid').all() as {
      rowid: number
      seq: number
      id: string
    }[]
  for (let i = 0; i < 3; i++) await createSession()
  // The newest execution gone (as a purge would remove it): the next one still numbers above the rest.
  const last = rows().at(-1)!
  raw.prepare('DELETE FROM executions WHERE id = ?').run(last.id)
  for (let i = 0; i < 2; i++) await createSession()
  const after = rows()
  expect(after.map((r) => r.seq)).toEqual(after.map((r) => r.rowid))
  expect(after.map((r) => r.seq)).toEqual([...after.map((r) => r.seq)].sort((a, b) => a - b))
  expect(new Set(after.map((r) => r.seq)).size).toBe(after.length)
})

it('[IDEM-001] creates a Session with a key never used without reading a receipt, and replays a used key', async () => {
  // The rate limit and the handler each look the key up (a replay is not counted against the rate): both
  // answer a key outside the instance's set of used keys without the store.
  await createSession()
  const used = `hot-${n}`
  const body = JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } })
  const send = () =>
    mock.app.request(`/v1/deployments/${D}/sessions`, {
      method: 'POST',
      headers: { ...H, 'Idempotency-Key': used },
      body,
    })
  // A receipt is read from its idempotency row or from the execution row that carries it (schema 330).
  const receiptRead = (sql: string) => /FROM idempotency/.test(sql) || /receipt_key = \?/.test(sql)
  const fresh = await traced(async () => expect((await send()).status).toBe(202))
  expect(fresh.filter(receiptRead)).toEqual([])
  expect(fresh.filter((sql) => /INSERT INTO idempotency/.test(sql))).toEqual([])
  const replay = await traced(async () => {
    const res = await send()
    expect(res.status).toBe(202)
    expect(res.headers.get('Idempotent-Replayed')).toBe('true')
  })
  expect(replay.filter(receiptRead).length).toBeGreaterThan(0)
})

it('[IDEM-001] replays a receipt carried by its Turn’s row without a statement once its read is kept, as a receipt row’s', async () => {
  mock.close()
  await start({ rateLimits: false })
  const body = JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } })
  const send = () =>
    mock.app.request(`/v1/deployments/${D}/sessions`, {
      method: 'POST',
      headers: { ...H, 'Idempotency-Key': 'carried-replay' },
      body,
    })
  const first = await send()
  expect(first.status).toBe(202)
  const text = await first.text()
  const counts: number[] = []
  for (let i = 0; i < 3; i++) {
    const sqls = await traced(async () => {
      const res = await send()
      expect(res.headers.get('Idempotent-Replayed')).toBe('true')
      expect(await res.text()).toBe(text)
    })
    counts.push(sqls.length)
  }
  // Kept from its second read with nothing written between (Db.cached): the third replay reads nothing.
  expect(counts.at(-1)).toBe(0)
})
