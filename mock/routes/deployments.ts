/** Deployments (Endpoints > Deployments): the list and detail of what the key may call. */
import type { Context, Hono } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { route } from '../http/route.js'
import { getDeployment, listDeployments, type Deployment } from '../store/deployments.js'

/** A Deployment the key may call, or 404 NOT_FOUND exactly as for an absent one (AUTH-003, AUTH-009). */
export function callableDeployment(c: Context<Env>, id: string): Deployment {
  const auth = c.var.auth!
  const deployment = getDeployment(c.var.deps.db, id)
  if (!deployment || deployment.project_id !== auth.projectId || !auth.deploymentIds.includes(id)) {
    throw new ApiError('NOT_FOUND', { message: 'No such Deployment.' })
  }
  return deployment
}

export function deploymentRoutes(app: Hono<Env>): void {
  route(app, 'listDeployments', (c) => {
    const auth = c.var.auth!
    const items = listDeployments(c.var.deps.db, auth.projectId).filter((d) =>
      auth.deploymentIds.includes(d.id),
    )
    return { status: 200, body: { items } }
  })
  route(app, 'getDeployment', (c) => ({
    status: 200,
    body: callableDeployment(c, c.req.param('deployment_id')!),
  }))
}
