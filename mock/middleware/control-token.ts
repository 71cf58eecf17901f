/**
 * The optional control-API token (--control-token, MOCK_CONTROL_TOKEN): when the mock is started with one,
 * every /_mock request needs `Authorization: Bearer <token>` (401 INVALID_API_KEY otherwise), for a mock
 * shared on a team network. Without one the control API is open, for local use.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { bearerToken } from './api-key.js'

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/** Compares two secrets in constant time (their digests, so lengths leak nothing either). */
export const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(digest(given), digest(expected))

export const controlToken = (): MiddlewareHandler<Env> =>
  async function controlToken(c, next) {
    const expected = c.var.deps.config.controlToken
    if (expected !== undefined) {
      const given = bearerToken(c.req.header('Authorization'))
      if (given === undefined || !sameSecret(given, expected))
        throw new ApiError('INVALID_API_KEY', {
          message: 'The control API needs the token the mock was started with (--control-token).',
        })
    }
    await next()
  }
