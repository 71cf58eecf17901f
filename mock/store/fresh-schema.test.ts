/**
 * A new store is built from the schema its migrations end with, made once per process and schema folder
 * (freshSchemaOf in mock/store/db.ts), instead of running every migration in turn (issue #13: most of what
 * createMock() cost). It must be the store the migrations make: the same tables, indexes and triggers, the same
 * rows, the same migrations recorded, and a store with some migrations applied still runs the rest in turn.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { packageFile } from '../../spec/index.js'
import { openDb, type Db } from './db.js'

const SCHEMA = packageFile('mock', 'store', 'schema')
const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Everything a store holds that its migrations decide: schema objects, recorded migrations, every row. */
function contents(db: Db) {
  const objects = db.raw
    .prepare(
      'SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name, tbl_name, sql',
    )
    .all()
  const migrations = db.raw.prepare('SELECT name FROM schema_migrations ORDER BY name').all()
  const tables = (
    db.raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as {
      name: string
    }[]
  ).map((t) => t.name)
  const rows = Object.fromEntries(
    tables.map((t) => [t, db.raw.prepare(`SELECT * FROM "${t}" ORDER BY 1`).all()]),
  )
  return { objects, migrations, rows }
}

function compareBuilds(schemaDir: string): void {
  const fresh = openDb(':memory:', { schemaDir })
  const inTurn = openDb(':memory:', { schemaDir, freshSchema: false })
  try {
    expect(contents(fresh)).toEqual(contents(inTurn))
  } finally {
    fresh.close()
    inTurn.close()
  }
}

it("builds a new store equal to one made by running the package's migrations in turn", () => {
  compareBuilds(SCHEMA)
  const db = openDb()
  try {
    // Not vacuous: the package's schema has its tables, triggers and every migration recorded.
    const { objects, migrations } = contents(db)
    expect(objects.length).toBeGreaterThan(40)
    expect(migrations).toHaveLength(readdirSync(SCHEMA).filter((f) => f.endsWith('.sql')).length)
  } finally {
    db.close()
  }
})

it('keeps the rows the migrations leave, AUTOINCREMENT counters included, and what later migrations rebuilt', () => {
  const dir = tempDir('schema-rows-')
  writeFileSync(
    join(dir, '010-a.sql'),
    `CREATE TABLE a (seq INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL);
     INSERT INTO a (v) VALUES ('one'), ('two'), ('it''s');
     DELETE FROM a WHERE v = 'two';
     CREATE TABLE b (k TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
     CREATE TRIGGER a_count AFTER INSERT ON a BEGIN
       INSERT INTO b (k, n) VALUES ('a', 1) ON CONFLICT (k) DO UPDATE SET n = n + 1;
     END;`,
  )
  writeFileSync(
    join(dir, '020-rebuild.sql'),
    `CREATE TABLE a2 (seq INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL, w INTEGER NOT NULL DEFAULT 7);
     INSERT INTO a2 (seq, v) SELECT seq, v FROM a;
     DROP TABLE a;
     ALTER TABLE a2 RENAME TO a;
     CREATE INDEX a_v ON a (v);
     INSERT INTO a (v) VALUES ('three');`,
  )
  compareBuilds(dir)
  const db = openDb(':memory:', { schemaDir: dir })
  try {
    expect(db.raw.prepare('SELECT seq, v, w FROM a ORDER BY seq').all()).toEqual([
      { seq: 1, v: 'one', w: 7 },
      { seq: 3, v: "it's", w: 7 },
      { seq: 4, v: 'three', w: 7 },
    ])
    // The counter the migrations advanced goes on from where they left it.
    db.raw.prepare("INSERT INTO a (v) VALUES ('four')").run()
    expect(db.raw.prepare("SELECT seq FROM a WHERE v = 'four'").get()).toEqual({ seq: 5 })
  } finally {
    db.close()
  }
})

it('follows a schema folder that changes: a migration added later is in the next new store', () => {
  const dir = tempDir('schema-grows-')
  writeFileSync(join(dir, '010-a.sql'), 'CREATE TABLE a (id TEXT PRIMARY KEY);')
  const first = openDb(':memory:', { schemaDir: dir })
  first.close()
  writeFileSync(join(dir, '020-b.sql'), 'CREATE TABLE b (id TEXT PRIMARY KEY);')
  const second = openDb(':memory:', { schemaDir: dir })
  try {
    expect(contents(second).migrations).toEqual([{ name: '010-a.sql' }, { name: '020-b.sql' }])
    expect(second.raw.prepare("SELECT name FROM sqlite_schema WHERE name = 'b'").get()).toEqual({
      name: 'b',
    })
  } finally {
    second.close()
  }
})

it('runs only the missing migrations, in turn, on a kept store made by an earlier version', () => {
  const dir = tempDir('schema-kept-')
  const before = tempDir('schema-before-')
  const files = readdirSync(SCHEMA).filter((f) => f.endsWith('.sql'))
  for (const f of files.slice(0, Math.floor(files.length / 2)))
    copyFileSync(join(SCHEMA, f), join(before, f))
  const path = join(dir, 'kept.db')
  const old = openDb(path, { schemaDir: before })
  old.raw.prepare("INSERT INTO meta (key, value) VALUES ('kept', 'yes')").run()
  old.close()
  const upgraded = openDb(path)
  const fresh = openDb()
  try {
    const kept = contents(upgraded)
    const made = contents(fresh)
    // The kept row survives; apart from it the upgraded store is what a new store is.
    expect(upgraded.raw.prepare("SELECT value FROM meta WHERE key = 'kept'").get()).toEqual({
      value: 'yes',
    })
    expect(kept.migrations).toEqual(made.migrations)
    expect(kept.objects).toEqual(made.objects)
  } finally {
    upgraded.close()
    fresh.close()
  }
})
