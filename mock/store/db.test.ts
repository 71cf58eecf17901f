/**
 * Db.cached (mock/store/db.ts): a cached read answers what the same SELECT run now would answer, whatever was
 * written before it (inserts, updates, deletes that cascade through foreign keys, INSERT OR REPLACE, writes
 * rolled back, reads inside a transaction), and a read with nothing written since runs no statement.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, expect, it } from 'vitest'
import { anonymousParameters, openDb, tablesRead, type Db } from './db.js'

const schemaDir = mkdtempSync(join(tmpdir(), 'db-cache-'))
writeFileSync(
  join(schemaDir, '001.sql'),
  `CREATE TABLE parent (id TEXT PRIMARY KEY, v INTEGER NOT NULL);
   CREATE TABLE child (id TEXT PRIMARY KEY, parent_id TEXT NOT NULL REFERENCES parent (id) ON DELETE CASCADE, v INTEGER NOT NULL);
   CREATE TABLE grandchild (id TEXT PRIMARY KEY, child_id TEXT NOT NULL REFERENCES child (id) ON DELETE CASCADE);
   CREATE TABLE other (id TEXT PRIMARY KEY, v INTEGER NOT NULL);`,
)
afterAll(() => rmSync(schemaDir, { recursive: true, force: true }))

const READS = [
  'SELECT * FROM parent WHERE id = ?',
  'SELECT * FROM child WHERE id = ?',
  'SELECT c.id, c.v, p.v AS parent_v FROM child c JOIN parent p ON p.id = c.parent_id WHERE c.id = ?',
  'SELECT id FROM grandchild WHERE child_id = ? ORDER BY id',
  'SELECT * FROM other WHERE id = ?',
]
const IDS = ['a', 'b', 'c']

type Op =
  | { kind: 'write'; sql: string; params: (string | number)[] }
  | { kind: 'rolledBack'; sql: string; params: (string | number)[] }
  | { kind: 'readInTx'; read: number; id: string; sql: string; params: (string | number)[] }

const id = fc.constantFrom(...IDS)
const v = fc.integer({ min: 0, max: 9 })
const write = fc.oneof(
  fc.tuple(id, v).map(([i, n]) => ({
    sql: 'INSERT OR IGNORE INTO parent (id, v) VALUES (?, ?)',
    params: [i, n],
  })),
  fc.tuple(id, v).map(([i, n]) => ({
    sql: 'INSERT OR REPLACE INTO parent (id, v) VALUES (?, ?)',
    params: [i, n],
  })),
  fc
    .tuple(id, v)
    .map(([i, n]) => ({ sql: 'UPDATE parent SET v = ? WHERE id = ?', params: [n, i] })),
  id.map((i) => ({ sql: 'DELETE FROM parent WHERE id = ?', params: [i] })),
  fc.tuple(id, id, v).map(([i, p, n]) => ({
    sql: 'INSERT OR IGNORE INTO child (id, parent_id, v) SELECT ?, id, ? FROM parent WHERE id = ?',
    params: [i, n, p],
  })),
  fc.tuple(id, v).map(([i, n]) => ({ sql: 'UPDATE child SET v = ? WHERE id = ?', params: [n, i] })),
  fc.tuple(id, id).map(([g, c]) => ({
    sql: 'INSERT OR IGNORE INTO grandchild (id, child_id) SELECT ?, id FROM child WHERE id = ?',
    params: [g, c],
  })),
  fc.tuple(id, v).map(([i, n]) => ({
    sql: 'INSERT OR REPLACE INTO other (id, v) VALUES (?, ?)',
    params: [i, n],
  })),
)
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: write.map((w) => ({ kind: 'write' as const, ...w })) },
  { weight: 1, arbitrary: write.map((w) => ({ kind: 'rolledBack' as const, ...w })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(write, fc.nat(READS.length - 1), id)
      .map(([w, read, i]) => ({ kind: 'readInTx' as const, read, id: i, ...w })),
  },
)

/**
 * Every cached read, for every id, against the same SQL run now without the cache; read twice, since a read
 * is kept from its second time.
 */
function expectFresh(db: Db) {
  for (const sql of READS)
    for (const i of IDS)
      for (let twice = 0; twice < 2; twice++)
        expect(db.cached(sql).all(i), `${sql} [${i}]`).toEqual(db.raw.prepare(sql).all(i))
}

it('answers every cached read as the same SELECT run now would, through writes, cascading deletes, rollbacks and transactions', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const db = openDb(':memory:', { schemaDir })
      try {
        for (const o of ops) {
          expectFresh(db)
          if (o.kind === 'write') db.stmt(o.sql).run(...o.params)
          else if (o.kind === 'rolledBack')
            expect(() =>
              db.tx(() => {
                expectFresh(db)
                db.stmt(o.sql).run(...o.params)
                expectFresh(db)
                throw new Error('roll back')
              }),
            ).toThrow('roll back')
          else
            db.tx(() => {
              db.stmt(o.sql).run(...o.params)
              expect(db.cached(READS[o.read]!).all(o.id)).toEqual(
                db.raw.prepare(READS[o.read]!).all(o.id),
              )
            })
        }
        expectFresh(db)
      } finally {
        db.close()
      }
    }),
    { numRuns: 150 },
  )
})

it('keeps a read from its second one with nothing written between: no statement then, one after a write to a table it reads', () => {
  const db = openDb(':memory:', { schemaDir })
  const prepared = db.stmt.bind(db)
  const ran: string[] = []
  ;(db as { stmt: Db['stmt'] }).stmt = (sql) => (ran.push(sql), prepared(sql))
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('a', 1)
  const read = READS[0]!
  ran.length = 0
  for (let i = 0; i < 4; i++) expect(db.cached(read).get('a')).toEqual({ id: 'a', v: 1 })
  // The first read is not kept (most reads are made once); the second is; the others run nothing.
  expect(ran).toEqual([read, read])
  db.stmt('UPDATE other SET v = 1').run()
  ran.length = 0
  db.cached(read).get('a')
  expect(ran).toEqual([])
  db.stmt('UPDATE parent SET v = 2').run()
  ran.length = 0
  for (let i = 0; i < 3; i++) expect(db.cached(read).get('a')).toEqual({ id: 'a', v: 2 })
  expect(ran).toEqual([read, read])
  db.close()
})

it('hands out frozen rows: a caller cannot change what the next caller reads', () => {
  const db = openDb(':memory:', { schemaDir })
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('a', 1)
  db.cached(READS[0]!).get('a')
  const row = db.cached(READS[0]!).get('a') as { v: number }
  expect(() => {
    row.v = 5
  }).toThrow(TypeError)
  expect(db.cached(READS[0]!).get('a')).toEqual({ id: 'a', v: 1 })
  db.close()
})

it('names every table a SELECT reads, joins and subqueries included; refuses to cache anything else', () => {
  expect(tablesRead(READS[2]!)).toEqual(['child', 'parent'])
  expect(
    tablesRead('SELECT * FROM a WHERE x IN (SELECT y FROM "b" JOIN c ON c.id = b.id)').sort(),
  ).toEqual(['a', 'b', 'c'])
  const db = openDb(':memory:', { schemaDir })
  expect(() => db.cached('UPDATE parent SET v = 1')).toThrow(/SELECT/)
  db.close()
})

it('maps a kept row once: each caller owns the record it gets at its top level, and its parsed values are frozen', () => {
  const db = openDb(':memory:', { schemaDir })
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('a', 1)
  let maps = 0
  const toRecord = (r: { id: string; v: number }) => {
    maps++
    return { id: r.id, v: r.v, parsed: { list: [r.v] } }
  }
  const read = db.cached(READS[0]!)
  read.record(toRecord, 'a') // a first read is mapped for its caller alone
  const first = read.record(toRecord, 'a')!
  first.v = 7
  const second = read.record(toRecord, 'a')!
  expect(second).toEqual({ id: 'a', v: 1, parsed: { list: [1] } })
  expect(maps).toBe(2)
  expect(() => second.parsed.list.push(2)).toThrow(TypeError)
  db.stmt('UPDATE parent SET v = 2 WHERE id = ?').run('a')
  read.record(toRecord, 'a')
  expect(read.record(toRecord, 'a')).toEqual({ id: 'a', v: 2, parsed: { list: [2] } })
  expect(read.record(toRecord, 'a')).toEqual({ id: 'a', v: 2, parsed: { list: [2] } })
  expect(maps).toBe(4)
  expect(read.record(toRecord, 'zz')).toBeUndefined()
  db.close()
})

it('copies a kept record as a spread would: the same own keys in the same order, the same values, a plain object the caller owns', () => {
  const db = openDb(':memory:', { schemaDir })
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('a', 1)
  const read = db.cached(READS[0]!)
  // Records of any shape through the same read: keys that need quoting, integer-like keys (ordered first),
  // "__proto__" as an own key (as JSON.parse makes it), undefined and nested values.
  const key = fc.oneof(
    fc.string(),
    fc.constantFrom('__proto__', 'constructor', 'a"b', "c'd", 'e\\f', '1', '-0', 'v', 'id'),
  )
  const value = fc.oneof(fc.jsonValue(), fc.constant(undefined))
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 12 }),
      (entries) => {
        const made = JSON.parse('{}') as Record<string, unknown>
        for (const [k, v] of entries)
          Object.defineProperty(made, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          })
        const toRecord = () => made
        read.record(toRecord, 'a') // the first read is the caller's own
        const copy = read.record(toRecord, 'a')! as Record<string, unknown>
        const spread = { ...made }
        expect(copy).not.toBe(made)
        expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
        expect(Reflect.ownKeys(copy)).toEqual(Reflect.ownKeys(spread))
        for (const k of Object.keys(spread)) expect(Object.is(copy[k], spread[k])).toBe(true)
        copy['added'] = 1
        expect((read.record(toRecord, 'a')! as Record<string, unknown>)['added']).toBe(
          spread['added'],
        )
        // A write: the next run reads the row again and maps it with its own function.
        db.stmt('UPDATE parent SET v = v + 1 WHERE id = ?').run('a')
      },
    ),
  )
  db.close()
})

it('copies each kept record of a list as a spread would, whatever shape each row maps to', () => {
  const db = openDb(':memory:', { schemaDir })
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('p', 1)
  db.stmt('INSERT INTO child (id, parent_id, v) VALUES (?, ?, ?)').run('c', 'p', 1)
  for (const g of ['g1', 'g2', 'g3'])
    db.stmt('INSERT INTO grandchild (id, child_id) VALUES (?, ?)').run(g, 'c')
  const read = db.cached(READS[3]!)
  const shape = fc.dictionary(fc.constantFrom('a', 'b', '__proto__', 'x y', '2'), fc.integer(), {
    noNullPrototype: true,
  })
  fc.assert(
    fc.property(fc.tuple(shape, shape, shape), (shapes) => {
      const made = shapes.map((fields) => {
        const r = JSON.parse('{}') as Record<string, unknown>
        for (const [k, v] of Object.entries(fields))
          Object.defineProperty(r, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          })
        return r
      })
      const toRecord = (row: { id: string }) => made[Number(row.id.slice(1)) - 1]!
      read.records(toRecord, 'c') // the first read is the caller's own
      const copies = read.records(toRecord, 'c') as Record<string, unknown>[]
      expect(copies).toHaveLength(3)
      copies.forEach((copy, i) => {
        const spread = { ...made[i]! }
        expect(copy).not.toBe(made[i])
        expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
        expect(Reflect.ownKeys(copy)).toEqual(Reflect.ownKeys(spread))
        for (const k of Object.keys(spread)) expect(copy[k]).toBe(spread[k])
      })
      db.stmt('UPDATE grandchild SET child_id = child_id').run()
    }),
  )
  db.close()
})

it('views a kept row without a copy: the same frozen record to every reader until a write, never one a caller owns', () => {
  const db = openDb(':memory:', { schemaDir })
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('a', 1)
  const toRecord = (r: { id: string; v: number }) => ({ id: r.id, v: r.v, parsed: { list: [r.v] } })
  const read = db.cached(READS[0]!)
  const once = read.view(toRecord, 'a')! // a first read: made for this reader
  expect(once).toEqual({ id: 'a', v: 1, parsed: { list: [1] } })
  const kept = read.view(toRecord, 'a')!
  expect(read.view(toRecord, 'a')).toBe(kept)
  expect(Object.isFrozen(kept) && Object.isFrozen(kept.parsed.list)).toBe(true)
  expect(() => ((kept as { v: number }).v = 7)).toThrow(TypeError)
  // record() still hands out a copy its caller owns, of the same kept record.
  const owned = read.record(toRecord, 'a')!
  expect(owned).not.toBe(kept)
  owned.v = 9
  expect(read.view(toRecord, 'a')).toEqual({ id: 'a', v: 1, parsed: { list: [1] } })
  db.stmt('UPDATE parent SET v = 2 WHERE id = ?').run('a')
  expect(read.view(toRecord, 'a')).toEqual({ id: 'a', v: 2, parsed: { list: [2] } })
  expect(read.view(toRecord, 'zz')).toBeUndefined()
  db.close()
})

it('keeps a read made in a transaction that wrote none of its tables, and no read of a table it wrote', () => {
  const db = openDb(':memory:', { schemaDir })
  const prepared = db.stmt.bind(db)
  const ran: string[] = []
  ;(db as { stmt: Db['stmt'] }).stmt = (sql) => (ran.push(sql), prepared(sql))
  db.stmt('INSERT INTO parent (id, v) VALUES (?, ?)').run('a', 1)
  db.stmt('INSERT INTO other (id, v) VALUES (?, ?)').run('a', 1)
  const [parent, , , , other] = READS as [string, string, string, string, string]
  ran.length = 0
  expect(() =>
    db.tx(() => {
      db.stmt('UPDATE other SET v = 2').run()
      for (let i = 0; i < 3; i++) {
        expect(db.cached(parent).get('a')).toEqual({ id: 'a', v: 1 })
        expect(db.cached(other).get('a')).toEqual({ id: 'a', v: 2 })
      }
      throw new Error('roll back')
    }),
  ).toThrow('roll back')
  // parent: read, kept at its second read, then served; other: read each time.
  expect(ran.filter((s) => s === parent)).toHaveLength(2)
  expect(ran.filter((s) => s === other)).toHaveLength(3)
  ran.length = 0
  expect(db.cached(parent).get('a')).toEqual({ id: 'a', v: 1 })
  expect(db.cached(other).get('a')).toEqual({ id: 'a', v: 1 })
  expect(ran).toEqual([other])
  db.close()
})

it('treats a write to a table with a trigger as a write to the tables the trigger writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'db-trigger-'))
  writeFileSync(
    join(dir, '001.sql'),
    `CREATE TABLE a (id TEXT PRIMARY KEY, v INTEGER NOT NULL);
     CREATE TABLE b (id TEXT PRIMARY KEY, n INTEGER NOT NULL);
     CREATE TABLE c (id TEXT PRIMARY KEY, n INTEGER NOT NULL);
     CREATE TRIGGER a_counts AFTER INSERT ON a BEGIN
       INSERT INTO b (id, n) VALUES ('count', 1) ON CONFLICT (id) DO UPDATE SET n = n + 1;
     END;`,
  )
  const db = openDb(':memory:', { schemaDir: dir })
  const prepared = db.stmt.bind(db)
  const ran: string[] = []
  ;(db as { stmt: Db['stmt'] }).stmt = (sql) => (ran.push(sql), prepared(sql))
  try {
    db.stmt('INSERT INTO c (id, n) VALUES (?, ?)').run('x', 0)
    const counts = db.cached('SELECT n FROM b WHERE id = ?')
    const unrelated = db.cached('SELECT n FROM c WHERE id = ?')
    for (let i = 0; i < 2; i++) {
      expect(counts.get('count')).toBeUndefined()
      expect(unrelated.get('x')).toEqual({ n: 0 })
    }
    db.stmt('INSERT INTO a (id, v) VALUES (?, ?)').run('x', 1)
    ran.length = 0
    expect(counts.get('count')).toEqual({ n: 1 })
    expect(unrelated.get('x')).toEqual({ n: 0 })
    expect(ran).toEqual(['SELECT n FROM b WHERE id = ?'])
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

it('treats a write to a table with a trigger as a write to every table when its body names no table written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'db-trigger-'))
  writeFileSync(
    join(dir, '001.sql'),
    `CREATE TABLE a (id TEXT PRIMARY KEY, v INTEGER NOT NULL);
     CREATE TABLE b (id TEXT PRIMARY KEY, n INTEGER NOT NULL);
     CREATE TRIGGER a_checks AFTER INSERT ON a BEGIN SELECT RAISE(ABORT, 'no') WHERE NEW.v < 0; END;`,
  )
  const db = openDb(':memory:', { schemaDir: dir })
  const prepared = db.stmt.bind(db)
  const ran: string[] = []
  ;(db as { stmt: Db['stmt'] }).stmt = (sql) => (ran.push(sql), prepared(sql))
  try {
    db.stmt('INSERT INTO b (id, n) VALUES (?, ?)').run('count', 0)
    const read = db.cached('SELECT n FROM b WHERE id = ?')
    for (let i = 0; i < 3; i++) expect(read.get('count')).toEqual({ n: 0 })
    db.stmt('INSERT INTO a (id, v) VALUES (?, ?)').run('x', 1)
    ran.length = 0
    expect(read.get('count')).toEqual({ n: 0 })
    expect(ran).toEqual(['SELECT n FROM b WHERE id = ?'])
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

it('refuses a bare LIMIT or OFFSET parameter (SQLite re-prepares such a statement on every run); the CAST form limits as a literal does', () => {
  const db = openDb()
  try {
    for (const sql of [
      'SELECT * FROM meta ORDER BY key LIMIT ?',
      'SELECT * FROM meta ORDER BY key limit @limit',
      'SELECT * FROM meta ORDER BY key LIMIT 5 OFFSET ?',
      'SELECT * FROM meta ORDER BY key LIMIT :n',
    ]) {
      expect(() => db.stmt(sql), sql).toThrow(/re-prepares the statement on every run/)
      expect(() => db.cached(sql).all(1), sql).toThrow(/re-prepares the statement on every run/)
    }
    const insert = db.stmt('INSERT INTO meta (key, value) VALUES (?, ?)')
    for (let i = 0; i < 12; i++) insert.run(`k${String(i).padStart(2, '0')}`, String(i))
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 15 }), (n, skip) => {
        const cast = db
          .stmt(
            'SELECT key FROM meta ORDER BY key LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)',
          )
          .all(n, skip)
        const literal = db.stmt(`SELECT key FROM meta ORDER BY key LIMIT ${n} OFFSET ${skip}`).all()
        expect(cast).toEqual(literal)
      }),
    )
  } finally {
    db.close()
  }
})

it('makes named parameters anonymous, one per occurrence, leaving string literals, quoted names and comments as they are', () => {
  expect(
    anonymousParameters(
      `UPDATE t SET a = @a, b = COALESCE(@b, b) -- @not_a_parameter
       WHERE "@id" = @id AND x = '@a''s @b' /* @c */ AND c = @b`,
    ),
  ).toEqual({
    sql: `UPDATE t SET a = ?, b = COALESCE(?, b) -- @not_a_parameter
       WHERE "@id" = ? AND x = '@a''s @b' /* @c */ AND c = ?`,
    names: ['a', 'b', 'id', 'b'],
  })
  // Other parameter forms, or none, are left to better-sqlite3.
  expect(anonymousParameters('SELECT * FROM t WHERE a = @a AND b = ?')).toBeUndefined()
  expect(anonymousParameters('SELECT * FROM t WHERE a = :a')).toBeUndefined()
  expect(anonymousParameters("SELECT json_extract(j, '$.kind') FROM t")).toBeUndefined()
})

it('binds named parameters and builds rows exactly as better-sqlite3 does (same keys in column order, same values)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'db-bind-'))
  writeFileSync(
    join(dir, '001.sql'),
    `CREATE TABLE r (id TEXT PRIMARY KEY, n INTEGER, f REAL, s TEXT, b BLOB, z TEXT);`,
  )
  const db = openDb(':memory:', { schemaDir: dir })
  try {
    const insert = 'INSERT INTO r (id, n, f, s, b, z) VALUES (@id, @n, @f, @s, @b, @z) RETURNING *'
    const select =
      "SELECT id, n, f, s, b, z, n AS again, 'lit' AS id FROM r WHERE n >= @min AND id <> @id"
    const value = fc.oneof(fc.constant(null), fc.integer(), fc.double({ noNaN: true }), fc.string())
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            id: fc.string({ minLength: 1 }),
            n: fc.integer({ min: -5, max: 5 }),
            f: fc.oneof(fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true })),
            s: value.map((v) => (v === null ? null : String(v))),
            b: fc.oneof(
              fc.constant(null),
              fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
            ),
            z: fc.oneof(fc.constant(null), fc.string()),
            unused: fc.string(),
          }),
          { selector: (r) => r.id, maxLength: 8 },
        ),
        fc.integer({ min: -6, max: 6 }),
        (rows, min) => {
          db.raw.exec('DELETE FROM r')
          for (const row of rows) {
            const ours = db.stmt(insert).get(row) as Record<string, unknown>
            db.raw.exec('SAVEPOINT again')
            db.raw.prepare('DELETE FROM r WHERE id = ?').run(row.id)
            const theirs = db.raw.prepare(insert).get(row) as Record<string, unknown>
            db.raw.exec('RELEASE again')
            expect(Object.keys(ours)).toEqual(Object.keys(theirs))
            expect(ours).toEqual(theirs)
          }
          const params = { min, id: rows[0]?.id ?? '' }
          const ours = db.stmt(select).all(params) as Record<string, unknown>[]
          const theirs = db.raw.prepare(select).all(params) as Record<string, unknown>[]
          expect(ours.map((r) => Object.keys(r))).toEqual(theirs.map((r) => Object.keys(r)))
          expect(ours).toEqual(theirs)
          expect([...(db.stmt(select).iterate(params) as Iterable<unknown>)]).toEqual(theirs)
          expect(db.stmt(select).get(params)).toEqual(theirs[0])
        },
      ),
    )
    // A missing named parameter is refused, as better-sqlite3 refuses it.
    expect(() => db.stmt(select).all({ min: 1 })).toThrow()
    expect(() => db.raw.prepare(select).all({ min: 1 })).toThrow()
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
