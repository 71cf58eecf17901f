// The benchmark's baseline: bare Hono on @hono/node-server serving fixed JSON bodies, with the two headers
// every mock answer carries (X-Request-Id, Cache-Control), set in the handler. Plain JavaScript so that it
// starts as a plain node process. Usage: node scripts/bench/bare-hono.mjs <port> <routes.json>
// routes.json: [{method, path, status, body}] (path in Hono's syntax, e.g. /v1/sessions/:id/turns/:tid).
/* global process, console */
import { readFileSync } from 'node:fs'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const [port, routesFile] = process.argv.slice(2)
const routes = routesFile ? JSON.parse(readFileSync(routesFile, 'utf8')) : []
const app = new Hono()
let n = 0
for (const r of routes) {
  app.on(r.method, r.path, (c) =>
    c.json(r.body, r.status, { 'X-Request-Id': `req_${n++}`, 'Cache-Control': 'no-store' }),
  )
}
app.get('/health', (c) => c.json({ status: 'ok' }))
serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`)
})
