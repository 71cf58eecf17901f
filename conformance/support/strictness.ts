/**
 * How strictly the suite reads response fields. The document promises additive changes within /v1 (new
 * response fields among them; a client ignores unknown ones, VER-003), so a field the document does not name
 * is not by itself a fault of a deployment:
 *   strict    an undocumented response field fails the check that finds it
 *   lenient   it is a warning (support/warnings.ts) and the check passes
 * CONFORMANCE_STRICT=1 (or true) is strict and CONFORMANCE_STRICT=0 (or false) lenient. Unset, the suite is
 * strict against the mock (in this process, or TARGET_URL without TARGET_WORLD: the reference implementation
 * must show only documented fields) and lenient against a real deployment (TARGET_URL with a world:
 * TARGET_WORLD_JSON, TARGET_WORLD or TARGET_API_KEY, as startTarget reads them). The CLI's --strict and
 * --lenient set CONFORMANCE_STRICT.
 */
import type { Target } from './target.js'

/** The kind of target the environment names, read as startTarget (support/target.ts) reads it. */
export function targetKindFromEnv(env: NodeJS.ProcessEnv = process.env): Target['kind'] {
  if (!env.TARGET_URL) return 'in-process'
  return env.TARGET_WORLD_JSON || env.TARGET_WORLD || env.TARGET_API_KEY ? 'real' : 'mock-http'
}

/** Whether undocumented response fields fail (true) or are warnings (false). */
export function isStrict(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CONFORMANCE_STRICT?.trim().toLowerCase()
  if (value === undefined || value === '') return targetKindFromEnv(env) !== 'real'
  if (value === '1' || value === 'true') return true
  if (value === '0' || value === 'false') return false
  throw new Error(`CONFORMANCE_STRICT must be 1 or 0, not "${env.CONFORMANCE_STRICT}"`)
}
