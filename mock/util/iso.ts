/**
 * Instants as the interface shows them: ISO 8601 UTC with milliseconds (Date#toISOString). The text of the
 * last instants formatted is kept (a polled Turn or Run shows the same instants on every read).
 */
import { memoizeRecent } from './memo.js'

const format = memoizeRecent((ms) => new Date(ms).toISOString(), 1024)

/** The ISO 8601 UTC text of an instant in ms. */
export function iso(ms: number): string
export function iso(ms: number | null): string | null
export function iso(ms: number | null): string | null {
  return ms === null ? null : format(ms)
}
