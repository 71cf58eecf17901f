/**
 * Opens the SQLite store (better-sqlite3: ":memory:" by default, a file with --db), applies the numbered
 * migrations of mock/store/schema/*.sql in file-name order, caches prepared statements and runs transactions.
 */
import { readdirSync, readFileSync } from 'node:fs'
import Database from 'better-sqlite3'
import { packageFile } from '../../spec/index.js'

/** A prepared statement; rows come back as plain objects (cast to the module's row type). */
export type Statement = Database.Statement<unknown[], unknown>

export interface Db {
  /** The underlying connection, for the rare case a module needs it (pragma, backup). */
  readonly raw: Database.Database
  /** ":memory:" or the file path. */
  readonly path: string
  /** A cached prepared statement: the same SQL text is compiled once per connection. */
  stmt(sql: string): Statement
  /** Runs fn in one transaction (a savepoint when nested) and returns its result; throws roll back. */
  tx<T>(fn: () => T): T
  /** Names of the tables holding world state (every table but the migration ledger). */
  worldTables(): string[]
  /** Empties every world table (inside the caller's transaction; foreign keys checked at its end). */
  clearWorld(): void
  close(): void
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

  const cache = new Map<string, Statement>()
  const stmt = (sql: string): Statement => {
    let s = cache.get(sql)
    if (!s) {
      s = raw.prepare(sql)
      cache.set(sql, s)
    }
    return s
  }
  // One transaction function for every tx() call (a savepoint when nested): building one per call cost more
  // than the BEGIN and COMMIT of a timer firing.
  const inTransaction = raw.transaction((fn: () => unknown) => fn())
  return {
    raw,
    path,
    stmt,
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
