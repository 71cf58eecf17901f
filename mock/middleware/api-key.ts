/**
 * API-key authentication of /v1 (Authentication 1, 3, 5): `Authorization: Bearer <key>`; a missing, malformed,
 * unknown, revoked or expired key is 401 INVALID_API_KEY; a Project not approved for the private beta sees
 * 404 NOT_FOUND on every path; requireScopes() answers 403 INSUFFICIENT_SCOPE.
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { usableKeyAndApproval } from '../access/access.js'
import type { Guard } from './guard.js'
import { headerOf } from './node-request.js'

/** `Bearer <token>` with one space-free token, else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '')
  return m?.[1]
}

/** True when the request carries a usable key of a Project not approved for the beta (SVC: 404 everywhere). */
export function carriesGatedKey(c: Context<Env>): boolean {
  const { db, clock } = c.var.deps
  const found = usableKeyAndApproval(db, bearerToken(headerOf(c, 'authorization')), clock.nowMs())
  return found !== undefined && !found.approved
}

export const authenticateApiKey = (): Guard =>
  function authenticateApiKey(c) {
    const { db, clock } = c.var.deps
    // The key and its Project's approval in one statement.
    const found = usableKeyAndApproval(db, bearerToken(headerOf(c, 'authorization')), clock.nowMs())
    // AUTH-001, AUTH-006, AUTH-007: every key problem is the same 401.
    if (!found) {
      throw new ApiError('INVALID_API_KEY', {
        message: 'The API key is missing, malformed, revoked or expired.',
      })
    }
    const { key } = found
    // SVC: a Project not approved for the private beta sees 404 on every /v1 path.
    if (!found.approved) throw new ApiError('NOT_FOUND')
    c.set('auth', {
      projectId: key.project_id,
      key: key.key,
      scopes: key.scopes,
      deploymentIds: key.deployment_ids,
    })
  }

/** Every scope of one of the alternatives must be held (`[[]]`: any valid key). */
export const requireScopes = (alternatives: string[][]): Guard =>
  function requireScopes(c) {
    const held = c.var.auth?.scopes ?? []
    const ok =
      alternatives.length === 0 || alternatives.some((all) => all.every((s) => held.includes(s)))
    if (!ok) {
      throw new ApiError('INSUFFICIENT_SCOPE', {
        message: `The key lacks the scope this operation needs (${alternatives.map((a) => a.join(' and ')).join(' or ')}).`,
        details: { required_scopes: alternatives },
      })
    }
  }
