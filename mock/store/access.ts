/** Changes of access made through the control API: revoke or expire a key, retire a Deployment. */
import type { Db } from './db.js'

export function revokeApiKey(db: Db, key: string): boolean {
  return db.stmt('UPDATE api_keys SET revoked = 1 WHERE key = ?').run(key).changes > 0
}

export function setApiKeyExpiry(db: Db, key: string, expiresAtMs: number): boolean {
  return (
    db.stmt('UPDATE api_keys SET expires_at = ? WHERE key = ?').run(expiresAtMs, key).changes > 0
  )
}

export function retireDeployment(db: Db, id: string, nowIso: string): boolean {
  return (
    db
      .stmt("UPDATE deployments SET status = 'RETIRED', revoked_at = ? WHERE id = ?")
      .run(nowIso, id).changes > 0
  )
}

/**
 * Ids of the open executions a key created. A key's executions are of its Project: the search runs over that
 * Project's open executions (executions_slots), which its slots and waiting cap keep few.
 */
export function openExecutionsOfKey(db: Db, key: string): string[] {
  return (
    db
      .stmt(
        'SELECT id FROM executions WHERE project_id = (SELECT project_id FROM api_keys WHERE key = @key) AND terminal = 0 AND api_key = @key',
      )
      .all({ key }) as { id: string }[]
  ).map((r) => r.id)
}

/** Ids of the open executions of a Deployment, searched among its Project's open executions. */
export function openExecutionsOfDeployment(db: Db, deploymentId: string): string[] {
  return (
    db
      .stmt(
        'SELECT id FROM executions WHERE project_id = (SELECT project_id FROM deployments WHERE id = @id) AND terminal = 0 AND deployment_id = @id',
      )
      .all({ id: deploymentId }) as { id: string }[]
  ).map((r) => r.id)
}
