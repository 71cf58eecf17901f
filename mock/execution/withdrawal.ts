/**
 * Withdrawn permission (States and transitions; Authentication 6): a running execution is canceled with
 * AUTHORIZATION_REVOKED when its key is revoked or expires, a scope it needed is withdrawn, or its Deployment
 * becomes unusable for the key (retired, or removed from the key's allowed list).
 */
import type { Deps } from '../deps.js'
import { openExecutionsOfKey } from '../store/access.js'
import { getExecution } from '../store/executions.js'
import { getApiKey } from '../store/projects.js'
import { finishExecution } from './lifecycle.js'

/** Cancels open executions with AUTHORIZATION_REVOKED (the message says why); returns their ids. */
export function revokeExecutions(
  deps: Deps,
  ids: string[],
  message = 'The key, a scope or the Deployment became unusable.',
): string[] {
  for (const id of ids) {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal) finishExecution(deps, e, 'CANCELED', 'AUTHORIZATION_REVOKED', message)
  }
  return ids
}

/**
 * STATE-019: after a key's scopes or allowed Deployments changed, cancels its open executions that became
 * unusable (a needed scope withdrawn, or the execution's Deployment no longer allowed) with
 * AUTHORIZATION_REVOKED; returns their ids. Executions that did not depend on what was withdrawn run on.
 * `needed`: the scopes each kind of execution needs (alternatives; one held in full is enough).
 */
export function withdrawnExecutions(
  deps: Deps,
  apiKey: string,
  needed: Record<'RUN' | 'TURN', string[][]>,
): string[] {
  const key = getApiKey(deps.db, apiKey)
  if (!key) return []
  const holds = (alternatives: string[][]) =>
    alternatives.some((all) => all.every((s) => key.scopes.includes(s)))
  const unusable = openExecutionsOfKey(deps.db, apiKey).filter((id) => {
    const e = getExecution(deps.db, id)
    if (!e) return false
    if (!holds(needed[e.kind])) return true
    return e.deployment_id !== null && !key.deployment_ids.includes(e.deployment_id)
  })
  return revokeExecutions(deps, unusable)
}
