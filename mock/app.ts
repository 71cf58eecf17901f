/**
 * createApp(deps): the middleware order (frame: deps, request id and the fixed headers; log; journal), the
 * /_mock control routes, the /v1 and /api/runtime mounting points, and the error policy: onError renders every error through
 * errorResponse; an unknown path is HTTP_ERROR 404, a known path with another method HTTP_ERROR 405.
 */
import { Hono } from 'hono'
import { TrieRouter } from 'hono/router/trie-router'
import type { Deps, Env } from './deps.js'
import { ApiError, ConnectionDropped, errorResponse } from './errors.js'
import { carriesGatedKey } from './middleware/api-key.js'
import { controlToken } from './middleware/control-token.js'
import { noteControlWrites } from './inspector/change-sources.js'
import { inspectorPageRoutes, inspectorRoutes } from './inspector/routes.js'
import { faults } from './middleware/faults.js'
import { forwardCompat } from './middleware/forward-compat.js'
import { journal } from './middleware/journal.js'
import { logger } from './middleware/logger.js'
import { frame } from './middleware/frame.js'
import { answerHeader } from './util/answer.js'
import { controlRoutes } from './routes/control.js'
import { controlAccessRoutes } from './routes/control-access.js'
import { controlActionRoutes } from './routes/control-actions.js'
import { controlRunRoutes } from './routes/control-runs.js'
import { controlRefereeRoutes } from './routes/control-referee.js'
import { refereeObserver } from './middleware/referee.js'
import { controlFaultRoutes } from './routes/control-faults.js'
import { artifactRoutes } from './routes/artifacts.js'
import { deploymentRoutes } from './routes/deployments.js'
import { eventRoutes } from './routes/events.js'
import { fileRoutes } from './routes/files.js'
import { itemRoutes } from './routes/items.js'
import { runRoutes } from './routes/runs.js'
import { sessionRoutes } from './routes/sessions.js'
import { usageRoutes } from './routes/usage.js'
import { webhookRoutes } from './routes/webhooks.js'
import { workflowRoutes } from './routes/workflows.js'
import { worksRoutes } from './routes/works.js'

/** The /v1 resource families (API key): each registers its documented operations through route(). */
const V1_FAMILIES = [
  deploymentRoutes,
  fileRoutes,
  artifactRoutes,
  sessionRoutes,
  usageRoutes,
  worksRoutes,
  workflowRoutes,
  runRoutes,
  eventRoutes,
  itemRoutes,
] as const
/** The management API under /api/runtime (owner login token, never an API key). */
const MANAGEMENT_FAMILIES = [webhookRoutes] as const

/** A fresh sub-app with the families' routes. */
function mount(families: readonly ((app: Hono<Env>) => void)[]): Hono<Env> {
  const app = new Hono<Env>()
  for (const register of families) register(app)
  return app
}

export function createApp(deps: Deps): Hono<Env> {
  const app = new Hono<Env>()

  app.use('*', frame(deps))
  // --quiet (and tests): no request line is built, so the logger is not mounted at all.
  if (deps.log.requestLines !== false) app.use('*', logger())
  app.use('*', journal())

  // The inspector's page holds no data: served before the control token (its state and stream are not).
  app.route('/_mock', inspectorPageRoutes())
  app.use('/_mock/*', controlToken())
  app.use('/_mock/*', noteControlWrites())
  app.route('/_mock', inspectorRoutes())
  app.route('/_mock', controlRoutes())
  app.route('/_mock', controlAccessRoutes())
  app.route('/_mock', controlActionRoutes())
  app.route('/_mock', controlRunRoutes())
  app.route('/_mock', controlRefereeRoutes())
  // The client referee watches /v1 from outside everything else that answers there (fault rules included).
  app.use('/v1/*', refereeObserver())
  app.route('/_mock', controlFaultRoutes())
  // Forward-compatibility fields and fault rules apply to the interface's paths only, never to /_mock.
  for (const path of ['/v1/*', '/api/runtime/*']) {
    app.use(path, forwardCompat())
    app.use(path, faults())
  }
  app.route('/v1', mount(V1_FAMILIES))
  app.route('/api/runtime', mount(MANAGEMENT_FAMILIES))

  app.onError((err, c) => {
    // A fault rule's dropped connection leaves the app unanswered (mock/server.ts closes the socket).
    if (err instanceof ConnectionDropped) throw err
    return errorResponse(c, err)
  })

  // Routes are fixed once createApp returns; the method index is built on the first unmatched request.
  let methodsOf: ((path: string) => string[]) | undefined
  app.notFound((c) => {
    // SVC-006: a key of a Project not approved for the beta sees 404 NOT_FOUND on every /v1 path.
    if (c.req.path.startsWith('/v1/') && carriesGatedKey(c))
      return errorResponse(c, new ApiError('NOT_FOUND'))
    methodsOf ??= methodIndex(app)
    const allowed = methodsOf(c.req.path)
    if (allowed.length > 0) {
      answerHeader(c, 'Allow', allowed.join(', '))
      return errorResponse(
        c,
        new ApiError('HTTP_ERROR', {
          status: 405,
          message: `method ${c.req.method} is not allowed on this path (allowed: ${allowed.join(', ')})`,
          details: { allowed },
        }),
      )
    }
    return errorResponse(c, new ApiError('HTTP_ERROR', { status: 404, message: 'no such path' }))
  })

  return app
}

/** Which methods have a handler for a path (middleware, registered for ALL methods, does not count). */
function methodIndex(app: Hono<Env>): (path: string) => string[] {
  const router = new TrieRouter<string>()
  const methods = new Set<string>()
  for (const r of app.routes) {
    if (r.method === 'ALL') continue
    router.add(r.method, r.path, r.method)
    methods.add(r.method)
  }
  const all = [...methods].sort()
  return (path) =>
    all.filter((m) => {
      const [matches] = router.match(m, path)
      return matches.length > 0
    })
}
