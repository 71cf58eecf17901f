/**
 * The management API under /api/runtime (owner login token, never an API key): the webhook endpoints and
 * deliveries routes (routes/webhooks.ts).
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'
import { webhookRoutes } from './webhooks.js'

/** A fresh /api/runtime sub-app, mounted by createApp at /api/runtime. */
export function managementRoutes(): Hono<Env> {
  const app = new Hono<Env>()
  webhookRoutes(app)
  return app
}
