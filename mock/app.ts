/**
 * createApp(deps): the /_mock control routes behind their middleware (frame: deps, request id and the fixed
 * headers; log; control token), the /v1 and /api/runtime operations each served through the service edge
 * (middleware/edge.ts: frame, log, journal, referee, forward-compatibility fields, fault rules), and the error
 * policy: every error is rendered through errorResponse; an unknown path is HTTP_ERROR 404, a known path with
 * another method HTTP_ERROR 405.
 */
import { Hono, type Context } from 'hono'
import { TrieRouter } from 'hono/router/trie-router'
import type { Deps, Env } from './deps.js'
import { ApiError, ConnectionDropped, errorResponse } from './errors.js'
import { carriesGatedKey } from './middleware/api-key.js'
import { controlToken } from './middleware/control-token.js'
import { noteControlWrites } from './inspector/change-sources.js'
import { inspectorPageRoutes, inspectorRoutes } from './inspector/routes.js'
import { logger } from './middleware/logger.js'
import { frame } from './middleware/frame.js'
import { serviceEdge, type Edge } from './middleware/edge.js'
import { answerHeader } from './util/answer.js'
import { controlRoutes } from './routes/control.js'
import { controlAccessRoutes } from './routes/control-access.js'
import { controlActionRoutes } from './routes/control-actions.js'
import { controlRunRoutes } from './routes/control-runs.js'
import { controlRefereeRoutes } from './routes/control-referee.js'
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

/**
 * Registers the families' routes on `app` under `prefix`, each served through the service edge: an interface
 * request matches exactly its operation's handler (no Hono middleware), which Hono calls directly.
 */
function mount(
  app: Hono<Env>,
  prefix: string,
  families: readonly ((app: Hono<Env>) => void)[],
  edge: Edge,
): void {
  const sub = new Hono<Env>()
  for (const register of families) register(sub)
  for (const r of sub.routes) {
    const handler = r.handler as (c: Context<Env>) => Response | Promise<Response>
    app.on(r.method, `${prefix}${r.path}`, (c) => edge(c, () => handler(c)))
  }
}

export function createApp(deps: Deps): Hono<Env> {
  const app = new Hono<Env>()
  const edge = serviceEdge(deps)

  // The control API (/_mock) is framed as Hono middleware; every other request by the service edge.
  app.use('/_mock/*', frame(deps))
  // --quiet (and tests): no request line is built, so the logger is not mounted at all.
  if (deps.log.requestLines !== false) app.use('/_mock/*', logger())

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
  app.route('/_mock', controlFaultRoutes())
  // The journal, the client referee, forward-compatibility fields and fault rules (middleware/edge.ts) apply
  // to the interface's paths only, never to /_mock.
  mount(app, '/v1', V1_FAMILIES, edge)
  mount(app, '/api/runtime', MANAGEMENT_FAMILIES, edge)

  app.onError((err, c) => {
    // A fault rule's dropped connection leaves the app unanswered (mock/server.ts closes the socket).
    if (err instanceof ConnectionDropped) throw err
    return errorResponse(c, err)
  })

  // Routes are fixed once createApp returns; the method index is built on the first unmatched request.
  let methodsOf: ((path: string) => string[]) | undefined
  // A /_mock path no control route has was framed by the middleware; any other goes through the edge.
  app.notFound((c) =>
    c.req.path === '/_mock' || c.req.path.startsWith('/_mock/')
      ? unmatched(c)
      : edge(c, () => unmatched(c)),
  )
  /** 404 or 405 HTTP_ERROR (or SVC-006's 404 NOT_FOUND) of a request no route has. */
  function unmatched(c: Context<Env>): Response {
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
  }

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
