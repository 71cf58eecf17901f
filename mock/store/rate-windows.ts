/** Call-rate windows: one row per scope (key, Project or Deployment, and class). O(1) per request. */
import type { RateWindow } from '../domain/rate-limits.js'
import type { Db } from './db.js'

export function getRateWindow(db: Db, scope: string): RateWindow | undefined {
  const row = db.stmt('SELECT start_ms, count FROM rate_windows WHERE scope = ?').get(scope) as
    { start_ms: number; count: number } | undefined
  return row && { startMs: row.start_ms, count: row.count }
}

export function putRateWindow(db: Db, scope: string, w: RateWindow): void {
  db.stmt(
    'INSERT INTO rate_windows (scope, start_ms, count) VALUES (?, ?, ?) ON CONFLICT (scope) DO UPDATE SET start_ms = excluded.start_ms, count = excluded.count',
  ).run(scope, w.startMs, w.count)
}
