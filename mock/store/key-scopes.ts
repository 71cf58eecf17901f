/** A key's scopes, rewritten by the control API (rehearse a narrower key: INSUFFICIENT_SCOPE, works:approve). */
import type { Db } from './db.js'

/** Replaces a key's scopes; false when there is no such key. */
export function setApiKeyScopes(db: Db, key: string, scopes: readonly string[]): boolean {
  return (
    db.stmt('UPDATE api_keys SET scopes_json = ? WHERE key = ?').run(JSON.stringify(scopes), key)
      .changes > 0
  )
}
