/**
 * Opens the SQLite store (better-sqlite3: ":memory:" by default, a file with --db), applies the numbered
 * migrations of mock/store/schema/*.sql in file-name order (a new store gets their final schema at once),
 * caches prepared statements and runs transactions.
 * Hot reads (a key, a Session, an execution, read on every request) go through cached(): their rows are kept
 * in memory until a table they read is written (WriteGenerations and readCache below).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { packageFile } from '../../spec/index.js'
import { memoize } from '../util/memo.js'
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
  /**
   * Runs fn once the writes made so far are committed: when the outermost tx() running now commits (at once
   * outside one). Dropped if that transaction, or the savepoint running now, rolls back.
   */
  afterCommit(fn: () => void): void
  /** Calls fn after each committed clearWorld() (a world reset), for what a module keeps beside the store. */
  onWorldCleared(fn: () => void): void
  /** Calls fn after each tx() or savepoint that rolls back (its writes undone), for what a module keeps beside the store. */
  onRollback(fn: () => void): void
  /**
   * What a store module keeps beside the store for this connection (an index in memory, say): one value per
   * name, made by make(db) on first use.
   */
  own<T>(name: string, make: (db: Db) => T): T
  /**
   * A table's write generation, as a function read at will: it grows whenever a statement through this
   * connection may have written the table (the bumps cached reads go by; a rollback does not undo one) and
   * is otherwise unchanged.
   */
  generationOf(table: string): () => number
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
  /**
   * The first row as map(row) makes it, read-only, or undefined: while the row is kept, one frozen record made
   * once per kept version and shared by every caller (no copy per call); else a record made now. For callers
   * that only read it.
   */
  view<R, T extends object>(map: (row: R) => T, ...params: Param[]): Readonly<T> | undefined
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
  opts: {
    schemaDir?: string
    durable?: boolean
    /**
     * Build a new store from the schema every migration ends with (the default, see freshSchemaOf) rather
     * than by running each migration in turn; false runs them one by one (tests compare the two).
     */
    freshSchema?: boolean
  } = {},
): Db {
  const schemaDir = opts.schemaDir ?? SCHEMA_DIR
  const raw = new Database(path)
  if (path !== ':memory:') {
    raw.pragma('journal_mode = WAL')
    raw.pragma(opts.durable ? 'synchronous = FULL' : 'synchronous = NORMAL')
  }
  raw.pragma('foreign_keys = ON')
  raw.pragma('busy_timeout = 5000')
  migrate(raw, schemaDir, opts.freshSchema ?? true)

  const writes = new WriteGenerations(raw)
  const cache = new Map<string, Statement>()
  const stmt = (sql: string): Statement => {
    let s = cache.get(sql)
    if (!s) {
      refuseBoundLimit(sql)
      const anonymous = anonymousParameters(sql)
      s = raw.prepare(anonymous ? anonymous.sql : sql)
      if (s.reader) rowsAsLiterals(s)
      if (anonymous) bindByPosition(s, anonymous.names)
      if (!s.readonly) writes.track(s, sql)
      cache.set(sql, s)
    }
    return s
  }
  const reads = new Map<string, CachedRead>()
  // One transaction function for every tx() call (a savepoint when nested): building one per call cost more
  // than the BEGIN and COMMIT of a timer firing.
  const inTransaction = raw.transaction((fn: () => unknown) => fn())
  /** The outermost tx() running now, with the write mark at its start (cached reads inside it, readCache). */
  const open: OpenTx = { active: false, mark: 0, committed: [] }
  const worldCleared: (() => void)[] = []
  const rolledBack: (() => void)[] = []
  const notifyRollback = () => {
    for (const f of rolledBack) f()
  }
  const owned = new Map<string, unknown>()
  /**
   * inTransaction inside tx() (the outermost, whose queue is empty at its start, or a savepoint in it): what fn
   * queued for after the commit goes if it rolls back.
   */
  const nested = <T>(fn: () => T): T => {
    const queued = open.committed.length
    try {
      return inTransaction(fn) as T
    } catch (error) {
      open.committed.length = queued
      notifyRollback()
      throw error
    }
  }
  return {
    raw,
    path,
    stmt,
    cached(sql) {
      let read = reads.get(sql)
      if (!read) {
        read = readCache(this, sql, writes, open)
        reads.set(sql, read)
      }
      return read
    },
    tx: <T>(fn: () => T): T => {
      if (open.active) return nested(fn)
      if (raw.inTransaction) return inTransaction(fn) as T
      open.active = true
      open.mark = writes.mark()
      let result: T
      try {
        result = nested(fn)
      } finally {
        open.active = false
      }
      if (open.committed.length > 0) for (const f of open.committed.splice(0)) f()
      return result
    },
    afterCommit(fn) {
      if (open.active) open.committed.push(fn)
      else fn()
    },
    onWorldCleared(fn) {
      worldCleared.push(fn)
    },
    onRollback(fn) {
      rolledBack.push(fn)
    },
    own<T>(name: string, make: (db: Db) => T): T {
      if (owned.has(name)) return owned.get(name) as T
      const value = make(this)
      owned.set(name, value)
      return value
    },
    generationOf(table) {
      const cells = writes.cellsOf([table])
      return () => writes.version(cells)
    },
    worldTables: () =>
      (
        stmt(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != '${MIGRATIONS_TABLE}' ORDER BY name`,
        ).all() as { name: string }[]
      ).map((r) => r.name),
    clearWorld() {
      raw.pragma('defer_foreign_keys = ON')
      for (const table of this.worldTables()) stmt(`DELETE FROM "${table}"`).run()
      this.afterCommit(() => {
        for (const f of worldCleared) f()
      })
    },
    close: () => {
      if (raw.open) raw.close()
    },
  }
}

type Method = 'run' | 'get' | 'all' | 'iterate'
type Call = (...a: unknown[]) => unknown
const METHODS: readonly Method[] = ['run', 'get', 'all', 'iterate']

/** Replaces each of a statement's methods by what `wrap` makes of it (given the method bound to `s`). */
function wrapMethods(
  s: Statement,
  methods: readonly Method[],
  wrap: (method: Method, call: Call) => Call,
): void {
  const target = s as unknown as Record<Method, Call>
  for (const method of methods) target[method] = wrap(method, target[method].bind(s))
}

/** Rows narrower than this are built by better-sqlite3 itself (an array and a literal cost about as much). */
const LITERAL_ROW_COLUMNS = 4

/**
 * Makes a reading statement's rows with one object literal per statement, from the row's values as
 * better-sqlite3 returns them in raw mode (an array). The rows are the same plain objects (same keys in
 * column order, a later column of the same name wins, same values), built for about half the cost: on Node
 * 20, better-sqlite3 sets each column on a new object by name, interning the name and changing the object's
 * shape once per column, on every row. The literal is compiled once per statement from its column names
 * (SQLite's own, quoted as JSON strings).
 */
function rowsAsLiterals(s: Statement): void {
  const names = s.columns().map((c) => c.name)
  if (names.length < LITERAL_ROW_COLUMNS || names.includes('__proto__')) return
  const make = new Function(
    'r',
    `return { ${names.map((n, i) => `${JSON.stringify(n)}: r[${i}]`).join(', ')} }`,
  ) as (r: unknown[]) => object
  s.raw(true)
  wrapMethods(s, ['get', 'all', 'iterate'], (method, call) => {
    if (method === 'get')
      return (...a) => {
        const row = call(...a) as unknown[] | undefined
        return row === undefined ? undefined : make(row)
      }
    if (method === 'all') return (...a) => (call(...a) as unknown[][]).map(make)
    return function* (...a: unknown[]) {
      for (const row of call(...a) as Iterable<unknown[]>) yield make(row)
    }
  })
}

/**
 * SQL whose parameters are all named `@name`, rewritten with anonymous parameters (`?`, one per occurrence:
 * better-sqlite3 binds values by position only to parameters without a name, and `?1` has one), and the names
 * in order of occurrence; undefined for SQL with no named parameter or with parameters of another form. String
 * literals, quoted names and comments are left as they are.
 */
export function anonymousParameters(sql: string): { sql: string; names: string[] } | undefined {
  const names: string[] = []
  let out = ''
  let i = 0
  while (i < sql.length) {
    const ch = sql[i]!
    if (ch === "'" || ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch
      let j = i + 1
      for (;;) {
        j = sql.indexOf(close, j)
        if (j < 0) return undefined
        if (close !== ']' && sql[j + 1] === close) j += 2
        else break
      }
      out += sql.slice(i, j + 1)
      i = j + 1
    } else if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      const j = end < 0 ? sql.length : end
      out += sql.slice(i, j)
      i = j
    } else if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      if (end < 0) return undefined
      out += sql.slice(i, end + 2)
      i = end + 2
    } else if (ch === '@') {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))?.[0]
      if (!name) return undefined
      names.push(name)
      out += '?'
      i += 1 + name.length
    } else if (ch === '?' || ch === ':' || ch === '$') {
      // Another parameter form (or a character this scan does not place): left to better-sqlite3.
      return undefined
    } else {
      out += ch
      i++
    }
  }
  return names.length === 0 ? undefined : { sql: out, names }
}

/**
 * Binds an object's fields to a statement prepared by anonymousParameters, by position: better-sqlite3 binds
 * a named parameter by looking its name up on the object, about 170 ns per parameter on every run, where a
 * positional one costs a few. A call is passed the object's fields in the names' order by a function compiled
 * once per statement; a field the object lacks (or holds undefined) is refused, as better-sqlite3 refuses a
 * missing named parameter.
 */
function bindByPosition(s: Statement, names: readonly string[]): void {
  const values = names.map((_, i) => `v${i}`)
  const spread = new Function(
    'f',
    'o',
    'missing',
    `${names.map((n, i) => `const v${i} = o[${JSON.stringify(n)}]`).join('\n')}
     if (${values.map((v) => `${v} === undefined`).join(' || ')}) missing(o)
     return f(${values.join(', ')})`,
  ) as (
    f: (...a: unknown[]) => unknown,
    o: Record<string, unknown>,
    missing: (o: Record<string, unknown>) => never,
  ) => unknown
  const missing = (o: Record<string, unknown>): never => {
    throw new RangeError(`Missing named parameter "${names.find((n) => o[n] === undefined)}"`)
  }
  wrapMethods(s, METHODS, (method, call) => (...a) => {
    const o = a[0]
    if (a.length !== 1 || typeof o !== 'object' || o === null || Buffer.isBuffer(o))
      throw new TypeError(`${method}: this statement takes one object of named parameters`)
    return spread(call, o as Record<string, unknown>, missing)
  })
}

/** A LIMIT or OFFSET given as a bare parameter (`LIMIT ?`, `LIMIT @limit`). */
const BOUND_LIMIT = /\b(?:LIMIT|OFFSET)\s+[?@:$]/i

/**
 * SQLite reads a bare parameter's bound value when it plans a LIMIT or OFFSET (an optimisation for small
 * limits), and a statement planned from a bound value is re-prepared (parsed and planned again) every time
 * that parameter is bound, that is on every run. `LIMIT CAST(? AS INTEGER)` is planned once.
 */
export function refuseBoundLimit(sql: string): void {
  if (BOUND_LIMIT.test(sql))
    throw new Error(
      `a bare LIMIT or OFFSET parameter re-prepares the statement on every run; write LIMIT CAST(? AS INTEGER): ${sql}`,
    )
}

/**
 * Applies every schema file not yet recorded in schema_migrations, each in its own transaction; a store that
 * has none applied and holds nothing gets them all at once from their final schema (freshSchemaOf) when
 * `freshSchema` is true.
 */
function migrate(raw: Database.Database, schemaDir: string, freshSchema: boolean): void {
  raw.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (name TEXT PRIMARY KEY) WITHOUT ROWID`)
  const applied = new Set(
    (raw.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all() as { name: string }[]).map(
      (r) => r.name,
    ),
  )
  const files = migrationFiles(schemaDir)
  if (freshSchema && applied.size === 0 && isEmpty(raw)) {
    applyFreshSchema(raw, freshSchemaOf(schemaKey(schemaDir, files)))
    return
  }
  for (const file of files) {
    if (applied.has(file)) continue
    const sql = readFileSync(`${schemaDir}/${file}`, 'utf8')
    raw.transaction(() => {
      raw.exec(sql)
      raw.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`).run(file)
    })()
  }
}

/** The migration files of a schema folder, in the order they apply (file name). */
function migrationFiles(schemaDir: string): string[] {
  return readdirSync(schemaDir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
}

/** No table, index, view or trigger but the migration ledger: a store nothing was ever applied to. */
function isEmpty(raw: Database.Database): boolean {
  const row = raw
    .prepare(`SELECT COUNT(*) AS n FROM sqlite_schema WHERE name != ?`)
    .get(MIGRATIONS_TABLE) as { n: number }
  return row.n === 0
}

/**
 * What every migration of a schema folder makes of an empty store: its schema (each table, index, view and
 * trigger's SQL, in the order SQLite holds them) with the rows the migrations left, and the migrations' names.
 */
type FreshSchema = {
  script: string
  rows: { table: string; columns: string[]; values: unknown[][] }[]
  names: string[]
}

/** A schema folder and its files as a memo key: a file added, removed or changed makes another key. */
function schemaKey(schemaDir: string, files: string[]): string {
  return JSON.stringify({
    schemaDir,
    files: files.map((f) => {
      const st = statSync(`${schemaDir}/${f}`)
      return [f, st.size, st.mtimeMs]
    }),
  })
}

/**
 * The FreshSchema of a schema folder, made once per process (and folder contents) by running its migrations
 * one by one on a scratch in-memory store. A new store (every createMock(), a new --db file) then gets it in
 * one transaction: 1.4 ms against 7.3 ms for the 30 migrations in turn, most of what createMock() cost (tables
 * created and then rebuilt by later migrations, a transaction per file). A store that has migrations applied
 * runs the ones it lacks, in turn, as before.
 */
const freshSchemaOf = memoize((key: string): FreshSchema => {
  const { schemaDir } = JSON.parse(key) as { schemaDir: string }
  const scratch = new Database(':memory:')
  try {
    scratch.pragma('foreign_keys = ON')
    migrate(scratch, schemaDir, false)
    const objects = scratch
      .prepare(
        `SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name != ? ORDER BY rowid`,
      )
      .all(MIGRATIONS_TABLE) as { sql: string }[]
    const tables = scratch
      .prepare(
        `SELECT name FROM sqlite_schema WHERE type = 'table' AND name != ? AND (name NOT LIKE 'sqlite_%' OR name = 'sqlite_sequence') ORDER BY rowid`,
      )
      .all(MIGRATIONS_TABLE) as { name: string }[]
    const rows = tables.flatMap(({ name }) => {
      const select = scratch.prepare(`SELECT * FROM "${name}"`).raw()
      const values = select.all() as unknown[][]
      return values.length === 0
        ? []
        : [{ table: name, columns: select.columns().map((c) => c.name), values }]
    })
    return {
      script: objects.map((o) => `${o.sql};`).join('\n'),
      rows,
      // The migrations the scratch store recorded: the ones its schema came from.
      names: (
        scratch.prepare(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY name`).all() as {
          name: string
        }[]
      ).map((r) => r.name),
    }
  } finally {
    scratch.close()
  }
})

/** Builds a FreshSchema into an empty store, in one transaction. */
function applyFreshSchema(raw: Database.Database, fresh: FreshSchema): void {
  raw.transaction(() => {
    raw.exec(fresh.script)
    for (const { table, columns, values } of fresh.rows) {
      const insert = raw.prepare(
        `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      )
      for (const v of values) insert.run(v)
    }
    const applied = raw.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`)
    for (const name of fresh.names) applied.run(name)
  })()
}

/** The statement shapes that write a table, and the table they write (its name in group 1). */
const WRITE_PATTERN =
  /(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?(\w+)"?/i

/**
 * Write generations: every statement that can change the store bumps, before it runs, the generation of the
 * table it writes (INSERT INTO t, INSERT OR REPLACE INTO t, REPLACE INTO t, UPDATE t, DELETE FROM t), of
 * every table whose foreign keys lead to t (a delete may cascade) and of every table a trigger on t writes
 * (the same statement shapes in the trigger's body, followed on through their own keys and triggers); a
 * writing statement of another shape, or one that writes a table with a trigger whose body names no table
 * written in those shapes, bumps them all. A cached read is valid while the sum of its tables' generations
 * is unchanged (generations only grow, so a write to any of them changes the sum). Rolled-back writes have
 * bumped too, which only costs a re-read.
 */
class WriteGenerations {
  /**
   * Each table's generation and latest bump, in a cell of its own: a statement and a cached read take their
   * tables' cells once, so a write or a check touches no map.
   */
  private readonly cells = new Map<string, WriteCell>()
  /** Bumped by writes that may touch any table. */
  private readonly everything: WriteCell = { n: 0, last: 0 }
  /** Counts every bump (a cell's `last` is the count at its latest bump). */
  private serial = 0
  /** For each table, the tables a write to it may change: itself, through foreign keys and triggers. */
  private readonly dependents = new Map<string, string[]>()

  constructor(raw: Database.Database) {
    const tables = (
      raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]
    ).map((r) => r.name)
    const known = new Set(tables)
    /** For each table, the tables a write to it writes as well (foreign-key children, trigger targets). */
    const next = new Map<string, string[]>()
    const add = (from: string, to: string) => next.set(from, [...(next.get(from) ?? []), to])
    for (const child of tables) {
      const fks = raw
        .prepare(`SELECT "table" AS parent FROM pragma_foreign_key_list(?)`)
        .all(child) as {
        parent: string
      }[]
      for (const { parent } of fks) add(parent, child)
    }
    // A trigger writes the tables its body names in a writing statement; one that names none may write
    // anywhere: a write to its table is a write to every table.
    const unknown = new Set<string>()
    const triggers = raw
      .prepare(`SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'`)
      .all() as { tbl_name: string; sql: string | null }[]
    for (const { tbl_name: table, sql } of triggers) {
      const body = sql ? /\bBEGIN\b([\s\S]*)$/i.exec(sql)?.[1] : undefined
      const written = body
        ? Array.from(body.matchAll(new RegExp(WRITE_PATTERN, 'gi')), (m) => m[1]!).filter((t) =>
            known.has(t),
          )
        : []
      if (written.length === 0) unknown.add(table)
      for (const t of written) add(table, t)
    }
    for (const table of tables) {
      const reached = new Set([table])
      const todo = [table]
      while (todo.length > 0) {
        for (const c of next.get(todo.pop()!) ?? []) {
          if (reached.has(c)) continue
          reached.add(c)
          todo.push(c)
        }
      }
      if ([...reached].some((t) => unknown.has(t))) continue
      this.dependents.set(table, [...reached])
    }
  }

  /** A mark of the writes so far (see unwrittenSince). */
  mark(): number {
    return this.serial
  }

  /** The cells of some tables (each made on first use). */
  cellsOf(tables: readonly string[]): WriteCell[] {
    return tables.map((t) => {
      let c = this.cells.get(t)
      if (!c) {
        c = { n: 0, last: 0 }
        this.cells.set(t, c)
      }
      return c
    })
  }

  /** True when no write since mark() gave `mark` may have touched any of the tables (given their cells). */
  unwrittenSince(cells: readonly WriteCell[], mark: number): boolean {
    if (this.everything.last > mark) return false
    for (const c of cells) if (c.last > mark) return false
    return true
  }

  /** The version of some tables (given their cells): unchanged while none of them is written. */
  version(cells: readonly WriteCell[]): number {
    let v = this.everything.n
    for (const c of cells) v += c.n
    return v
  }

  /** Wraps a writing statement's run/get/all/iterate so that each call first bumps what it may write. */
  track(s: Statement, sql: string): void {
    const m = new RegExp(`^\\s*${WRITE_PATTERN.source}`, 'i').exec(sql)
    const touched = m ? this.dependents.get(m[1]!) : undefined
    const cells = touched ? this.cellsOf(touched) : [this.everything]
    const bump = () => {
      const serial = ++this.serial
      for (const c of cells) {
        c.n++
        c.last = serial
      }
    }
    wrapMethods(s, METHODS, (_, call) => (...args) => {
      bump()
      return call(...args)
    })
  }
}

/** One table's write generation and the serial of its latest bump (WriteGenerations). */
type WriteCell = { n: number; last: number }

/** At most this many parameter lists are kept per cached SQL (then the cache of that SQL starts over). */
const CACHED_PARAMS = 256

/** The tables a SELECT reads: every name after FROM or JOIN (subqueries included). */
export function tablesRead(sql: string): string[] {
  return [...new Set(Array.from(sql.matchAll(/\b(?:FROM|JOIN)\s+"?(\w+)"?/gi), (m) => m[1]!))]
}

/**
 * Db.tx's outermost transaction: whether one runs now, WriteGenerations.mark() at its start, and what runs
 * once it commits (afterCommit).
 */
type OpenTx = { active: boolean; mark: number; committed: (() => void)[] }

/** Makes a shallow copy of a kept record (the same own keys, in the same order, and values). */
type Copier = (record: object) => object

const copyBySpread: Copier = (record) => ({ ...record })

/**
 * The copier of a record of this shape: one object literal of its keys, compiled once per key list. A
 * spread (`{ ...record }`) at one site that copies records of many shapes (Projects, keys, Deployments,
 * Sessions) is megamorphic, and V8 then copies property by property on its slow path; a literal of known
 * keys is built in one step. A record with symbol keys, or with __proto__ among its keys (which a literal
 * would take as the prototype), is copied by a spread.
 */
function copierOf(record: object): Copier {
  if (Object.getOwnPropertySymbols(record).length > 0) return copyBySpread
  return compiledCopier(JSON.stringify(Object.keys(record)))
}

const compiledCopier = memoize((keysJson: string): Copier => {
  const keys = JSON.parse(keysJson) as string[]
  if (keys.includes('__proto__')) return copyBySpread
  const fields = keys.map((k) => `${JSON.stringify(k)}: r[${JSON.stringify(k)}]`)
  return new Function('r', `return { ${fields.join(', ')} }`) as Copier
})

function readCache(db: Db, sql: string, writes: WriteGenerations, open: OpenTx): CachedRead {
  if (!/^\s*SELECT\b/i.test(sql)) throw new Error(`Db.cached takes a SELECT: ${sql}`)
  const cells = writes.cellsOf(tablesRead(sql))
  type Entry = {
    version: number
    rows: readonly unknown[]
    /**
     * The first row as the last map given to record() or view() made it (its contents frozen; its top level
     * not, since V8 copies a frozen object on a slow path, about 8 times slower), and the frozen copy view()
     * hands out, made on first use.
     */
    mapped?: { map: (row: never) => object; record: object; copy: Copier; view?: object }
    /** Every row as the last map given to records() made it (their contents frozen). */
    mappedAll?: { map: (row: never) => object; records: object[]; copies: Copier[] }
  }
  const kept = new Map<string, Entry>()
  /** Reads seen once (their key and version): a read is kept only when it comes again unchanged. */
  const seen = new Map<string, number>()
  /**
   * The kept entry of these parameters (read now if it is stale), or undefined for a plain read: inside a
   * transaction that may have written a table the SQL reads (a rollback could undo the rows; a transaction
   * not begun by Db.tx counts as one), or the first read of these parameters at this version (a read made
   * once, as most reads of work being created are, is not worth keeping; a polled one is). Rows read in a
   * transaction that wrote none of the tables are committed ones: a rollback leaves them as they are.
   */
  const entry = (params: Param[]): Entry | undefined => {
    const key = params.length === 1 ? String(params[0]) : params.join('\u0000')
    const version = writes.version(cells)
    const hit = kept.get(key)
    if (hit && hit.version === version) return hit
    if (db.raw.inTransaction && !(open.active && writes.unwrittenSince(cells, open.mark)))
      return undefined
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
  /** The first row read now, as map(row) makes it. */
  const fresh = <R, T>(map: (row: R) => T, params: Param[]): T | undefined => {
    const row = db.stmt(sql).get(...params) as R | undefined
    return row === undefined ? undefined : map(row)
  }
  /** The kept first row as the last map given makes it (mapped once, its contents frozen), or undefined. */
  const keptRecord = <R, T extends object>(e: Entry, map: (row: R) => T) => {
    const row = e.rows[0] as R | undefined
    if (row === undefined) return undefined
    if (e.mapped?.map !== map) {
      const record = freezeContents(map(row))
      e.mapped = { map, record, copy: copierOf(record) }
    }
    return e.mapped as unknown as { record: T; copy: Copier; view?: T }
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
      if (!e) return fresh(map, params)
      const kept = keptRecord(e, map)
      return kept && (kept.copy(kept.record) as T)
    },
    view<R, T extends object>(map: (row: R) => T, ...params: Param[]): Readonly<T> | undefined {
      const e = entry(params)
      if (!e) return fresh(map, params)
      const kept = keptRecord(e, map)
      return kept && (kept.view ??= Object.freeze(kept.copy(kept.record) as T))
    },
    records<R, T extends object>(map: (row: R) => T, ...params: Param[]): T[] {
      const e = entry(params)
      if (!e) return (db.stmt(sql).all(...params) as R[]).map(map)
      if (e.mappedAll?.map !== map) {
        const records = e.rows.map((row) => freezeContents(map(row as R)))
        e.mappedAll = { map, records, copies: records.map(copierOf) }
      }
      const { records, copies } = e.mappedAll
      return records.map((r, i) => copies[i]!(r) as T)
    },
  }
}
