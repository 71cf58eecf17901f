/** Deployments (Endpoints > Deployments): the list and detail of what the key may call. */
import type { Hono } from 'hono'
import type { Env } from '../deps.js'
import { callableDeployment } from '../access/access.js'
import { route } from '../http/route.js'
import { listDeployments } from '../store/deployments.js'

export function deploymentRoutes(app: Hono<Env>): void {
  route(app, 'listDeployments', (c, req) => {
    const auth = req.auth
    const items = listDeployments(c.var.deps.db, auth.projectId).filter((d) =>
      auth.deploymentIds.includes(d.id),
    )
    return { status: 200, body: { items } }
  })
  route(app, 'getDeployment', (c, req) => ({
    status: 200,
    body: callableDeployment(c.var.deps, req.auth, req.params.deployment_id),
  }))
}
