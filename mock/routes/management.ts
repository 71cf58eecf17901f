/**
 * The management API under /api/runtime (owner login token, never an API key). Empty for now: the webhook
 * endpoints and deliveries routes are mounted here as they arrive.
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'

/** A fresh /api/runtime sub-app, mounted by createApp at /api/runtime. */
export function managementRoutes(): Hono<Env> {
  return new Hono<Env>()
}
