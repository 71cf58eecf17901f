/**
 * The client referee's control routes (mock only, under /_mock; MOCK-CONTRACT "Fault rules and the client
 * referee"): GET /_mock/referee answers {violations:[{rule, requirement_id, key, requests, at}], dropped}
 * (what the mock saw clients do against the document's client rules, oldest first; mock/referee/rules.ts);
 * DELETE /_mock/referee clears the findings and what was observed. POST /_mock/reset clears them too.
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'

/** A fresh sub-app of the referee routes, mounted by createApp at /_mock. */
export function controlRefereeRoutes(): Hono<Env> {
  const app = new Hono<Env>()
  app.get('/referee', (c) => c.json(c.var.deps.referee.report()))
  app.delete('/referee', (c) => {
    c.var.deps.referee.clear()
    return c.json(c.var.deps.referee.report())
  })
  return app
}
