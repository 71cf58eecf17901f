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
 *   GET  /_mock/runs/{run_id}/sessions                  -> {run_id, session_ids}: the internal Sessions of a
 *                                                          Run's steps (Session paths refuse them: 409 WORKFLOW_MANAGED_SESSION)
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { revokeExecutions, withdrawnExecutions } from '../execution/withdrawal.js'
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
import { acceptScopes } from '../http/operations.js'
import { controlBodyAjv as ajv } from '../util/ajv.js'

const deploymentsBody = ajv.compile<{ deployment_ids: string[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['deployment_ids'],
  properties: {
    deployment_ids: { type: 'array', uniqueItems: true, items: { type: 'string', minLength: 1 } },
  },
})

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
        return withdrawnExecutions(deps, key, acceptScopes())
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
