/**
 * Row -> record mapping. `({ a_json, ...rest }) => ({ ...rest, a })` copies every column twice through V8's
 * generic (slow) object-rest path; on the hot path (keys, Projects, Sessions, executions read per request)
 * the columns are copied once, in a loop, and the derived fields set on the copy.
 */
import { deepFreeze } from '../util/freeze.js'

/** A copy of the row without the columns named in `except` (their derived fields are set by the caller). */
export function columnsExcept(row: object, except: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const r = row as Record<string, unknown>
  for (const k in r) if (!except.has(k)) out[k] = r[k]
  return out
}

/**
 * Freezes everything a record holds, not the record itself: a kept record that is only ever handed out as
 * shallow copies (copying a frozen object takes V8's slow path).
 */
export function freezeContents<T extends object>(record: T): T {
  for (const v of Object.values(record)) deepFreeze(v)
  return record
}
