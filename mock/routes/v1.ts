/**
 * The /v1 interface (API-key authenticated). Empty for now: the resource route modules (deployments,
 * sessions, files, artifacts, workflows, runs, usage, works) are mounted here as they arrive.
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'

/** A fresh /v1 sub-app, mounted by createApp at /v1. */
export function v1Routes(): Hono<Env> {
  return new Hono<Env>()
}
