/**
 * The inspector's routes on the control API: the page (GET /_mock/ui and its assets: script, style sheet, icon; plain files shipped
 * in the package and found from its root), the state it shows (GET /_mock/ui/state, GET
 * /_mock/ui/executions/{id}) and the change stream (GET /_mock/stream). The page's files hold no data, so
 * they are served before the control token is checked; the state and the stream need it like all of /_mock.
 * Every page answer carries a strict Content-Security-Policy: its own script and style only, no inline code.
 */
import { readFileSync } from 'node:fs'
import { Hono } from 'hono'
import { packageFile } from '../../spec/index.js'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { inspectorState } from './snapshot.js'
import { openChangeStream } from './stream.js'
import { executionTimeline } from './timeline.js'

/** The page's files: mock/inspector/page/ of the package (not compiled, shipped as they are). */
const PAGE_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/ui': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/inspector.js': { file: 'inspector.js', type: 'text/javascript; charset=utf-8' },
  '/ui/inspector.css': { file: 'inspector.css', type: 'text/css; charset=utf-8' },
  '/ui/inspector.svg': { file: 'inspector.svg', type: 'image/svg+xml' },
}

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** GET /_mock/ui and its assets (mounted under /_mock before the control token). */
export function inspectorPageRoutes(): Hono<Env> {
  const app = new Hono<Env>()
  for (const [path, { file, type }] of Object.entries(PAGE_FILES)) {
    app.get(path, (c) => {
      c.header('Content-Type', type)
      c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      c.header('X-Content-Type-Options', 'nosniff')
      c.header('Referrer-Policy', 'no-referrer')
      c.header('X-Frame-Options', 'DENY')
      return c.body(readFileSync(packageFile('mock', 'inspector', 'page', file), 'utf8'))
    })
  }
  return app
}

/** The page's data and the change stream (mounted under /_mock after the control token). */
export function inspectorRoutes(): Hono<Env> {
  const app = new Hono<Env>()
  app.get('/ui/state', (c) => c.json(inspectorState(c.var.deps)))
  app.get('/ui/executions/:id', (c) => {
    const id = c.req.param('id')
    const timeline = id.length <= 200 ? executionTimeline(c.var.deps, id) : undefined
    if (!timeline) throw new ApiError('NOT_FOUND', { message: 'no Turn or Run with that id' })
    return c.json(timeline)
  })
  app.get('/stream', (c) => {
    // A HEAD request gets the headers only: no stream stays open for it.
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'Content-Type': 'text/event-stream' })
    return openChangeStream(c.var.deps)
  })
  return app
}
