/** A key's scopes and allowed Deployments, rewritten by the control API (rehearse a narrower key: INSUFFICIENT_SCOPE, works:approve). */
import type { Db } from './db.js'

/** Replaces a key's scopes; false when there is no such key. */
export function setApiKeyScopes(db: Db, key: string, scopes: readonly string[]): boolean {
  return (
    db.stmt('UPDATE api_keys SET scopes_json = ? WHERE key = ?').run(JSON.stringify(scopes), key)
      .changes > 0
  )
}

/** Replaces a key's allowed Deployments; false when there is no such key. */
export function setApiKeyDeployments(
  db: Db,
  key: string,
  deploymentIds: readonly string[],
): boolean {
  return (
    db
      .stmt('UPDATE api_keys SET deployment_ids_json = ? WHERE key = ?')
      .run(JSON.stringify(deploymentIds), key).changes > 0
  )
}
