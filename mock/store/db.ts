/**
 * Opens the SQLite store (better-sqlite3: ":memory:" by default, a file with --db), applies the numbered
 * migrations of mock/store/schema/*.sql in file-name order, caches prepared statements and runs transactions.
 * Hot reads (a key, a Session, an execution, read on every request) go through cached(): their rows are kept
 * in memory until a table they read is written (WriteGenerations and readCache below).
 */
import { readdirSync, readFileSync } from 'node:fs'
import Database from 'better-sqlite3'
import { packageFile } from '../../spec/index.js'
import { freezeContents } from './rows.js'

/** A prepared statement; rows come back as plain objects (cast to the module's row type). */
export type Statement = Database.Statement<unknown[], unknown>

export interface Db {
  /** The underlying connection, for the rare case a module needs it (pragma, backup). */
  readonly raw: Database.Database
  /** ":memory:" or the file path. */
  readonly path: string
  /** A cached prepared statement: the same SQL text is compiled once per connection. */
  stmt(sql: string): Statement
  /**
   * A read whose rows are kept in memory (from its second read with nothing written between) and served
   * again until a table the SQL reads (every name after FROM or JOIN) is written through this connection.
   * Rows are frozen: callers map them to records, never edit them.
   */
  cached(sql: string): CachedRead
  /** Runs fn in one transaction (a savepoint when nested) and returns its result; throws roll back. */
  tx<T>(fn: () => T): T
  /** Names of the tables holding world state (every table but the migration ledger). */
  worldTables(): string[]
  /** Empties every world table (inside the caller's transaction; foreign keys checked at its end). */
  clearWorld(): void
  close(): void
}

type Param = string | number | null

/** A cached read (Db.cached): get() is the first row or undefined, all() every row (rows are frozen). */
export type CachedRead = {
  get(...params: Param[]): unknown
  all(...params: Param[]): unknown[]
  /**
   * The first row as map(row) makes it, or undefined: a record the caller owns at its top level (it may set
   * fields and save it). While the row is kept it is mapped once (its JSON columns parsed once): the kept
   * record is never handed out, each caller gets a shallow copy, whose nested values (parsed JSON) are shared
   * and frozen: they are replaced, never edited.
   */
  record<R, T extends object>(map: (row: R) => T, ...params: Param[]): T | undefined
  /** Every row as map(row) makes it, on the terms of record(). */
  records<R, T extends object>(map: (row: R) => T, ...params: Param[]): T[]
}

// The SQL files stay in mock/store/schema (shipped as they are): found from the package root, built or not.
const SCHEMA_DIR = packageFile('mock', 'store', 'schema')
const MIGRATIONS_TABLE = 'schema_migrations'

/**
 * Opens (and migrates) the store at path; ":memory:" keeps everything in memory. A file store runs in WAL
 * mode: every committed transaction survives a crash of the process (SIGKILL). With synchronous=NORMAL (the
 * default) the last transactions may be lost on a power loss or an OS crash; `durable` sets synchronous=FULL,
 * which syncs every commit to disk (slower).
 */
export function openDb(
  path = ':memory:',
  opts: { schemaDir?: string; durable?: boolean } = {},
): Db {
  const schemaDir = opts.schemaDir ?? SCHEMA_DIR
  const raw = new Database(path)
  if (path !== ':memory:') {
    raw.pragma('journal_mode = WAL')
    raw.pragma(opts.durable ? 'synchronous = FULL' : 'synchronous = NORMAL')
  }
  raw.pragma('foreign_keys = ON')
  raw.pragma('busy_timeout = 5000')
  migrate(raw, schemaDir)

  const writes = new WriteGenerations(raw)
  const cache = new Map<string, Statement>()
  const stmt = (sql: string): Statement => {
    let s = cache.get(sql)
    if (!s) {
      s = raw.prepare(sql)
      if (!s.readonly) writes.track(s, sql)
      cache.set(sql, s)
    }
    return s
  }
  const reads = new Map<string, CachedRead>()
  // One transaction function for every tx() call (a savepoint when nested): building one per call cost more
  // than the BEGIN and COMMIT of a timer firing.
  const inTransaction = raw.transaction((fn: () => unknown) => fn())
  return {
    raw,
    path,
    stmt,
    cached(sql) {
      let read = reads.get(sql)
      if (!read) {
        read = readCache(this, sql, writes)
        reads.set(sql, read)
      }
      return read
    },
    tx: <T>(fn: () => T): T => inTransaction(fn) as T,
    worldTables: () =>
      (
        stmt(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '${MIGRATIONS_TABLE}' ORDER BY name`,
        ).all() as { name: string }[]
      ).map((r) => r.name),
    clearWorld() {
      raw.pragma('defer_foreign_keys = ON')
      for (const table of this.worldTables()) stmt(`DELETE FROM "${table}"`).run()
    },
    close: () => {
      if (raw.open) raw.close()
    },
  }
}

/** Applies every schema file not yet recorded in schema_migrations, each in its own transaction. */
function migrate(raw: Database.Database, schemaDir: string): void {
  raw.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name TEXT PRIMARY KEY) WITHOUT ROWID`)
  const applied = new Set(
    (raw.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all() as { name: string }[]).map(
      (r) => r.name,
    ),
  )
  const files = readdirSync(schemaDir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
  for (const file of files) {
    if (applied.has(file)) continue
    const sql = readFileSync(`${schemaDir}/${file}`, 'utf8')
    raw.transaction(() => {
      raw.exec(sql)
      raw.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`).run(file)
    })()
  }
}

/**
 * Write generations: every statement that can change the store bumps, before it runs, the generation of the
 * table it writes (INSERT INTO t, INSERT OR REPLACE INTO t, REPLACE INTO t, UPDATE t, DELETE FROM t) and of
 * every table whose foreign keys lead to t (a delete may cascade); a writing statement of another shape, or
 * one that writes a table with a trigger, bumps them all. A cached read is valid while the sum of its tables' generations is unchanged (generations only
 * grow, so a write to any of them changes the sum). Rolled-back writes have bumped too, which only costs a
 * re-read.
 */
class WriteGenerations {
  /** Each table's generation, in a cell of its own: a write bumps its cells without a lookup by name. */
  private readonly generations = new Map<string, { n: number }>()
  /** Bumped by writes that may touch any table. */
  private readonly all = { n: 0 }
  /** For each table, the tables whose foreign keys reference it (directly or through others). */
  private readonly dependents = new Map<string, string[]>()

  constructor(raw: Database.Database) {
    const tables = (
      raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]
    ).map((r) => r.name)
    const children = new Map<string, string[]>()
    for (const child of tables) {
      const fks = raw
        .prepare(`SELECT "table" AS parent FROM pragma_foreign_key_list(?)`)
        .all(child) as {
        parent: string
      }[]
      for (const { parent } of fks) children.set(parent, [...(children.get(parent) ?? []), child])
    }
    // A table with a trigger may write anywhere: a write to it is a write to every table.
    const triggered = new Set(
      (
        raw.prepare(`SELECT tbl_name FROM sqlite_master WHERE type = 'trigger'`).all() as {
          tbl_name: string
        }[]
      ).map((r) => r.tbl_name),
    )
    for (const table of tables) {
      if (triggered.has(table)) continue
      const reached = new Set([table])
      const todo = [table]
      while (todo.length > 0) {
        for (const c of children.get(todo.pop()!) ?? []) {
          if (reached.has(c)) continue
          reached.add(c)
          todo.push(c)
        }
      }
      this.dependents.set(table, [...reached])
    }
  }

  /** The generation cell of a table (made on first use). */
  cell(table: string): { n: number } {
    let c = this.generations.get(table)
    if (!c) {
      c = { n: 0 }
      this.generations.set(table, c)
    }
    return c
  }

  /** The version of a set of tables, given their cells (cell()): unchanged while none of them is written. */
  version(cells: readonly { n: number }[]): number {
    let v = this.all.n
    for (const c of cells) v += c.n
    return v
  }

  /** Wraps a writing statement's run/get/all/iterate so that each call first bumps what it may write. */
  track(s: Statement, sql: string): void {
    const m =
      /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?(\w+)"?/i.exec(
        sql,
      )
    const touched = m ? this.dependents.get(m[1]!) : undefined
    // The cells this statement bumps: its table's and those of the tables whose rows a delete may cascade to.
    const cells = touched ? touched.map((t) => this.cell(t)) : [this.all]
    const target = s as unknown as Record<
      'run' | 'get' | 'all' | 'iterate',
      (...a: unknown[]) => unknown
    >
    for (const method of ['run', 'get', 'all', 'iterate'] as const) {
      const call = target[method]
      target[method] = (...args: unknown[]) => {
        for (const c of cells) c.n++
        return call.apply(s, args)
      }
    }
  }
}

/** At most this many parameter lists are kept per cached SQL (then the cache of that SQL starts over). */
const CACHED_PARAMS = 256

/** The tables a SELECT reads: every name after FROM or JOIN (subqueries included). */
export function tablesRead(sql: string): string[] {
  return [...new Set(Array.from(sql.matchAll(/\b(?:FROM|JOIN)\s+"?(\w+)"?/gi), (m) => m[1]!))]
}

function readCache(db: Db, sql: string, writes: WriteGenerations): CachedRead {
  if (!/^\s*SELECT\b/i.test(sql)) throw new Error(`Db.cached takes a SELECT: ${sql}`)
  const tables = tablesRead(sql).map((t) => writes.cell(t))
  type Entry = {
    version: number
    rows: readonly unknown[]
    /** The first row as the last map given to record() made it (its contents frozen). */
    mapped?: { map: (row: never) => object; record: object }
    /** Every row as the last map given to records() made it (their contents frozen). */
    mappedAll?: { map: (row: never) => object; records: object[] }
  }
  const kept = new Map<string, Entry>()
  /** Reads seen once (their key and version): a read is kept only when it comes again unchanged. */
  const seen = new Map<string, number>()
  /**
   * The kept entry of these parameters (read now if it is stale), or undefined for a plain read: inside a
   * transaction (a rollback could undo the rows), or the first read of these parameters at this version (a
   * read made once, as most reads of work being created are, is not worth keeping; a polled one is).
   */
  const entry = (params: Param[]): Entry | undefined => {
    const key = params.length === 1 ? String(params[0]) : params.join('\u0000')
    const version = writes.version(tables)
    const hit = kept.get(key)
    if (hit && hit.version === version) return hit
    if (db.raw.inTransaction) return undefined
    if (seen.get(key) !== version) {
      if (seen.size >= CACHED_PARAMS) seen.clear()
      seen.set(key, version)
      return undefined
    }
    seen.delete(key)
    const rows = db.stmt(sql).all(...params) as object[]
    for (const r of rows) Object.freeze(r)
    const made: Entry = { version, rows: Object.freeze(rows) }
    if (kept.size >= CACHED_PARAMS) kept.clear()
    kept.set(key, made)
    return made
  }
  return {
    get: (...params) => {
      const e = entry(params)
      return e ? e.rows[0] : db.stmt(sql).get(...params)
    },
    all: (...params) => {
      const e = entry(params)
      return e ? [...e.rows] : db.stmt(sql).all(...params)
    },
    record<R, T extends object>(map: (row: R) => T, ...params: Param[]): T | undefined {
      const e = entry(params)
      if (!e) {
        const row = db.stmt(sql).get(...params) as R | undefined
        return row === undefined ? undefined : map(row)
      }
      const row = e.rows[0] as R | undefined
      if (row === undefined) return undefined
      if (e.mapped?.map !== map) e.mapped = { map, record: freezeContents(map(row)) }
      return { ...(e.mapped.record as T) }
    },
    records<R, T extends object>(map: (row: R) => T, ...params: Param[]): T[] {
      const e = entry(params)
      if (!e) return (db.stmt(sql).all(...params) as R[]).map(map)
      if (e.mappedAll?.map !== map)
        e.mappedAll = { map, records: e.rows.map((row) => freezeContents(map(row as R))) }
      return e.mappedAll.records.map((r) => ({ ...(r as T) }))
    },
  }
}
