/**
 * Applies the instance's fault rules (mock/faults/rules.ts) to /v1 and management requests: the catalog's
 * error envelope, a proxy's bare 502/503/504, a wall delay, or a dropped connection before or after the
 * request is processed. Mounted on /v1/* and /api/runtime/* only (the control API is never faulted). With no
 * active rule it costs one property read.
 */
import type { MiddlewareHandler } from 'hono'
import { TrieRouter } from 'hono/router/trie-router'
import { wallSleep } from '../clock/wall-timeout.js'
import type { Env } from '../deps.js'
import { ConnectionDropped } from '../errors.js'
import { faultError, type FaultRule } from '../faults/rules.js'
import { loadOperations } from '../http/operations.js'
import { lazy } from '../util/memo.js'
import { answerHeader } from '../util/answer.js'

/** method + path -> operationId, from the document's operation table. */
const operationRouter = lazy(() => {
  const router = new TrieRouter<string>()
  for (const op of loadOperations().values())
    router.add(op.method.toUpperCase(), op.honoPath, op.operationId)
  return router
})

/** The operationId a request is for, or undefined for a path the document does not have. */
export function operationOf(method: string, path: string): string | undefined {
  const [matches] = operationRouter().match(method === 'HEAD' ? 'GET' : method, path)
  return matches[0]?.[0]
}

const BEARER = /^Bearer\s+(\S+)\s*$/i

const PROXY_TEXT: Record<number, string> = {
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}

export function faults(): MiddlewareHandler<Env> {
  return async function faultRules(c, next) {
    const rules = c.var.deps.faults
    if (rules.active === 0) return next()
    const method = c.req.method
    const path = c.req.path
    const auth = c.req.header('Authorization')
    const rule: FaultRule | undefined = rules.take('http', {
      method,
      path,
      key: auth ? BEARER.exec(auth)?.[1] : undefined,
      operation: () => operationOf(method, path),
    })
    if (!rule) return next()
    const action = rule.action
    answerHeader(c, 'X-Mock-Fault', rule.id)
    if ('error' in action) {
      throw faultError(action, c.var.deps.clock.nowMs())
    }
    if ('proxy' in action) {
      // What a proxy in front of the service sends: its own text page, no envelope (retry rule 5).
      return c.body(`${action.proxy} ${PROXY_TEXT[action.proxy]}\n`, action.proxy, {
        'Content-Type': 'text/plain; charset=utf-8',
      })
    }
    if ('delay_ms' in action) {
      await wallSleep(action.delay_ms)
      return next()
    }
    if ('drop' in action) {
      if (action.drop === 'before') throw new ConnectionDropped('before')
      await next()
      // The answer is never sent: release a streamed body (an SSE stream) before dropping.
      await c.res.body?.cancel().catch(() => undefined)
      throw new ConnectionDropped('after')
    }
    return next()
  }
}
