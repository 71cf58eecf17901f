/**
 * The service edge: what every request outside the control API passes through, around the handler that
 * answers it (an operation's, mock/http/route.ts, or the 404/405 answer): the frame (frame.ts), the request
 * log line (logger.ts, unless --quiet), and on the interface's paths (/v1, /api/runtime) the request journal
 * (journal.ts), the client referee (referee.ts, /v1 only), forward-compatibility fields (forward-compat.ts)
 * and fault rules (faults.ts), in that order from the outside in.
 *
 * It is one plain function around the handler instead of a chain of Hono middleware: an interface request
 * matches exactly one handler, which Hono calls directly, and an answer ready without waiting (a read, a
 * replay) goes back without a promise, so @hono/node-server writes it at once. Forward-compatibility fields
 * and fault rules run, as middleware, only while they are switched on. Errors become the document's envelope
 * here (errorResponse), as app.onError would make them, so that the journal and the referee see the answer;
 * only a fault rule's dropped connection goes on (mock/server.ts closes the socket).
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { Deps, Env } from '../deps.js'
import { ConnectionDropped, errorResponse } from '../errors.js'
import { buildsOwnAnswers, completeAnswer } from '../util/answer.js'
import { faults } from './faults.js'
import { forwardCompat } from './forward-compat.js'
import { framer } from './frame.js'
import { arrival, recordRequest, type Arrival } from './journal.js'
import { logger } from './logger.js'
import { refereeAnswer, refereeArrival, type Watch } from './referee.js'

/** An answer, now or later. */
type Answer = Response | Promise<Response>
/** The handler's part: what answers the request. */
export type Inner = () => Answer

export type Edge = (c: Context<Env>, inner: Inner) => Answer

export function serviceEdge(deps: Deps): Edge {
  const frameOf = framer(deps)
  const forwardCompatFields = forwardCompat()
  const faultRules = faults()
  const logLine = deps.log.requestLines !== false ? logger() : undefined

  /** Journal, referee, forward-compatibility fields and fault rules around the handler. */
  function service(c: Context<Env>, inner: Inner): Answer {
    const arrived = arrival(c)
    const watch = c.req.path.startsWith('/v1/') ? refereeArrival(c) : undefined
    let handled = inner
    if (deps.faults.active > 0) handled = via(faultRules, c, handled)
    if (deps.forwardCompat.enabled) handled = via(forwardCompatFields, c, handled)
    const answer = settle(c, handled)
    if (answer instanceof Promise)
      return answer.then(
        (res) => answered(c, res, arrived, watch),
        (error: unknown) => dropped(c, error, arrived, watch),
      )
    return answered(c, answer, arrived, watch)
  }

  return (c, inner) => {
    const headers = frameOf(c)
    c.set('answerHeaders', headers)
    const path = c.req.path
    const core: Inner = buildsOwnAnswers(path) ? () => service(c, inner) : () => settle(c, inner)
    const answer = logLine ? settle(c, via(logLine, c, core)) : core()
    return answer instanceof Promise ? answer.then((res) => framed(c, res)) : framed(c, answer)
  }
}

/** The handler's answer, or the envelope of what it threw (a dropped connection goes on). */
function settle(c: Context<Env>, inner: Inner): Answer {
  try {
    const answer = inner()
    return answer instanceof Promise ? answer.catch((error: unknown) => failed(c, error)) : answer
  } catch (error) {
    return failed(c, error)
  }
}

function failed(c: Context<Env>, error: unknown): Response {
  if (error instanceof ConnectionDropped) throw error
  return errorResponse(c, error)
}

/** Runs a Hono middleware around the rest (as Hono's chain would): its own answer, else the rest's. */
function via(middleware: MiddlewareHandler<Env>, c: Context<Env>, rest: Inner): Inner {
  return async () => {
    const own = await middleware(c, async () => {
      keep(c, await settle(c, rest))
    })
    if (own instanceof Response) keep(c, own)
    return c.res
  }
}

/** Makes `res` the context's answer (c.res), which the journal, the referee and the middleware read. */
function keep(c: Context<Env>, res: Response): void {
  if (c.finalized && c.res === res) return
  // Cleared first: Hono's c.res setter would otherwise copy the earlier answer's headers into a new Response.
  if (c.finalized) c.res = undefined
  c.res = res
}

/** The answer sent: the referee judges it, the journal records it. */
function answered(
  c: Context<Env>,
  res: Response,
  arrived: Arrival,
  watch: Watch | undefined,
): Answer {
  keep(c, res)
  recordRequest(c, arrived, res.status)
  const judged = watch ? refereeAnswer(c, watch, true) : undefined
  return judged ? judged.then(() => res) : res
}

/** No answer at all (a fault rule dropped the connection): the referee and the journal note it, then on. */
async function dropped(
  c: Context<Env>,
  error: unknown,
  arrived: Arrival,
  watch: Watch | undefined,
): Promise<never> {
  recordRequest(c, arrived, c.res.status)
  if (watch) await refereeAnswer(c, watch, false)
  throw error
}

/** The answer with every header of the frame: those the mock built itself carry them already. */
function framed(c: Context<Env>, res: Response): Response {
  if (res === c.var.builtAnswer) return res
  keep(c, res)
  completeAnswer(c)
  return c.res
}
