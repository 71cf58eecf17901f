/**
 * The meta table: small key-value records of the mock's own state (virtual clock, id generator, world flag).
 */
import type { Db } from './db.js'

/** Reads one meta value, or undefined when never written. */
export function getMeta(db: Db, key: string): string | undefined {
  const row = db.stmt('SELECT value FROM meta WHERE key = ?').get(key) as
    { value: string } | undefined
  return row?.value
}

/** Writes (inserts or replaces) one meta value. */
export function setMeta(db: Db, key: string, value: string): void {
  db.stmt(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  ).run(key, value)
}

/** Reads a JSON meta value. */
export function getMetaJson<T>(db: Db, key: string): T | undefined {
  const v = getMeta(db, key)
  return v === undefined ? undefined : (JSON.parse(v) as T)
}

/** Writes a JSON meta value. */
export function setMetaJson(db: Db, key: string, value: unknown): void {
  setMeta(db, key, JSON.stringify(value))
}
