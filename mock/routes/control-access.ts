/**
 * Control API extensions for access changes (mock only, under /_mock): revoke or expire a key and retire a
 * Deployment. Running executions whose key or Deployment becomes unusable are canceled with
 * AUTHORIZATION_REVOKED (States and transitions; Authentication 6).
 *
 *   POST /_mock/keys/{key}/revoke                       -> {key, revoked: true, canceled: [execution ids]}
 *   POST /_mock/keys/{key}/expire  {at?: ISO time}      -> expires now, or at a later virtual time
 *   POST /_mock/deployments/{deployment_id}/retire      -> {id, status: RETIRED, canceled: [...]}
 *   POST /_mock/keys/{key}/deployments {deployment_ids} -> replaces the key's allowed Deployments; its open
 *                                                          executions of a removed Deployment are canceled
 *   (POST /_mock/keys/{key}/scopes, in control.ts, cancels through withdrawnExecutions too)
 *   GET  /_mock/runs/{run_id}/sessions                  -> {run_id, session_ids}: the internal Sessions of a
 *                                                          Run's steps (Session paths refuse them: 409 WORKFLOW_MANAGED_SESSION)
 */
import { Hono } from 'hono'
import type { Deps, Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { finishExecution } from '../execution/lifecycle.js'
import {
  openExecutionsOfDeployment,
  openExecutionsOfKey,
  retireDeployment,
  revokeApiKey,
  setApiKeyExpiry,
} from '../store/access.js'
import { getDeployment } from '../store/deployments.js'
import { getExecution, sessionsOfRun } from '../store/executions.js'
import { getApiKey } from '../store/projects.js'
import { setApiKeyDeployments } from '../store/key-scopes.js'
import { body } from '../http/control-body.js'
import { loadOperations } from '../http/operations.js'
import { controlBodyAjv as ajv } from '../util/ajv.js'
import { lazy } from '../util/memo.js'

/**
 * STATE-019: the scopes an execution needs for as long as it runs: those of the operation that accepted it
 * (createRun: workflows:run; Session creation: none, x-assumed-scope), read from spec/openapi.yaml. Each entry
 * lists alternatives; one of them held in full is enough.
 */
const neededScopes = lazy(() => {
  const ops = loadOperations()
  const scopesOf = (operationId: string): string[][] => {
    const security = ops.get(operationId)?.security
    return security?.kind === 'apiKey' ? security.scopes : [[]]
  }
  return { RUN: scopesOf('createRun'), TURN: scopesOf('createSession') }
})

/**
 * STATE-019, AUTH-010: the key's open executions that became unusable after its scopes or allowed Deployments
 * changed (a needed scope withdrawn, or the execution's Deployment no longer allowed), canceled with
 * AUTHORIZATION_REVOKED; returns their ids. Executions that did not depend on what was withdrawn run on.
 */
export function withdrawnExecutions(deps: Deps, apiKey: string): string[] {
  const key = getApiKey(deps.db, apiKey)
  if (!key) return []
  const holds = (alternatives: string[][]) =>
    alternatives.some((all) => all.every((s) => key.scopes.includes(s)))
  const unusable = openExecutionsOfKey(deps.db, apiKey).filter((id) => {
    const e = getExecution(deps.db, id)
    if (!e) return false
    if (!holds(neededScopes()[e.kind])) return true
    return e.deployment_id !== null && !key.deployment_ids.includes(e.deployment_id)
  })
  return revokeExecutions(deps, unusable)
}

const deploymentsBody = ajv.compile<{ deployment_ids: string[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['deployment_ids'],
  properties: {
    deployment_ids: { type: 'array', uniqueItems: true, items: { type: 'string', minLength: 1 } },
  },
})

/** Cancels open executions with AUTHORIZATION_REVOKED; returns their ids. */
export function revokeExecutions(deps: Deps, ids: string[]): string[] {
  for (const id of ids) {
    const e = getExecution(deps.db, id)
    if (e && !e.terminal)
      finishExecution(
        deps,
        e,
        'CANCELED',
        'AUTHORIZATION_REVOKED',
        'The key or Deployment became unusable.',
      )
  }
  return ids
}

export function controlAccessRoutes(): Hono<Env> {
  const app = new Hono<Env>()

  app.post('/keys/:key/revoke', async (c) => {
    const deps = c.var.deps
    const key = c.req.param('key')
    const canceled = await deps.scheduler.exclusive(() =>
      deps.db.tx(() => {
        if (!revokeApiKey(deps.db, key))
          throw new ApiError('NOT_FOUND', { message: `no key ${key}` })
        return revokeExecutions(deps, openExecutionsOfKey(deps.db, key))
      }),
    )
    return c.json({ key, revoked: true, canceled })
  })

  app.post('/keys/:key/expire', async (c) => {
    const deps = c.var.deps
    const key = c.req.param('key')
    const body = (await c.req.json().catch(() => ({}))) as { at?: unknown }
    const nowMs = deps.clock.nowMs()
    const atMs =
      body.at === undefined ? nowMs : typeof body.at === 'string' ? Date.parse(body.at) : NaN
    if (!Number.isFinite(atMs) || atMs < nowMs) {
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message: 'at must be an ISO time not before now',
      })
    }
    const canceled = await deps.scheduler.exclusive(() =>
      deps.db.tx(() => {
        if (!getApiKey(deps.db, key)) throw new ApiError('NOT_FOUND', { message: `no key ${key}` })
        setApiKeyExpiry(deps.db, key, atMs)
        if (atMs > nowMs) {
          deps.scheduler.schedule('access.key-expiry', atMs, { key })
          return []
        }
        return revokeExecutions(deps, openExecutionsOfKey(deps.db, key))
      }),
    )
    return c.json({ key, expires_at: new Date(atMs).toISOString(), canceled })
  })

  app.post('/deployments/:deployment_id/retire', async (c) => {
    const deps = c.var.deps
    const id = c.req.param('deployment_id')
    const canceled = await deps.scheduler.exclusive(() =>
      deps.db.tx(() => {
        if (!getDeployment(deps.db, id))
          throw new ApiError('NOT_FOUND', { message: `no Deployment ${id}` })
        retireDeployment(deps.db, id, new Date(deps.clock.nowMs()).toISOString())
        return revokeExecutions(deps, openExecutionsOfDeployment(deps.db, id))
      }),
    )
    return c.json({ id, status: 'RETIRED', canceled })
  })

  app.post('/keys/:key/deployments', async (c) => {
    const deps = c.var.deps
    const key = c.req.param('key')
    const { deployment_ids } = await body(c, deploymentsBody)
    const canceled = await deps.scheduler.exclusive(() =>
      deps.db.tx(() => {
        if (!setApiKeyDeployments(deps.db, key, deployment_ids))
          throw new ApiError('NOT_FOUND', { message: `no key ${key}` })
        return withdrawnExecutions(deps, key)
      }),
    )
    return c.json({ key, deployment_ids, canceled })
  })

  app.get('/runs/:run_id/sessions', (c) => {
    const runId = c.req.param('run_id')
    if (getExecution(c.var.deps.db, runId)?.kind !== 'RUN')
      throw new ApiError('NOT_FOUND', { message: `no Run ${runId}` })
    return c.json({ run_id: runId, session_ids: sessionsOfRun(c.var.deps.db, runId) })
  })

  return app
}
