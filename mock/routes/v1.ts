/**
 * The /v1 interface (API-key authenticated): each resource family registers its documented operations here
 * through route() (mock/http/route.ts).
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'
import { artifactRoutes } from './artifacts.js'
import { deploymentRoutes } from './deployments.js'
import { eventRoutes } from './events.js'
import { fileRoutes } from './files.js'
import { itemRoutes } from './items.js'
import { runRoutes } from './runs.js'
import { sessionRoutes } from './sessions.js'
import { usageRoutes } from './usage.js'
import { workflowRoutes } from './workflows.js'
import { worksRoutes } from './works.js'

/** A fresh /v1 sub-app, mounted by createApp at /v1. */
export function v1Routes(): Hono<Env> {
  const app = new Hono<Env>()
  deploymentRoutes(app)
  fileRoutes(app)
  artifactRoutes(app)
  sessionRoutes(app)
  usageRoutes(app)
  worksRoutes(app)
  workflowRoutes(app)
  runRoutes(app)
  eventRoutes(app)
  itemRoutes(app)
  return app
}
