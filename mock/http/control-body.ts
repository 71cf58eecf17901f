/**
 * Reading control-API bodies (mock only): a JSON body, empty meaning {}, validated by an ajv function;
 * INVALID_INPUT 400 when it is not JSON, 422 with the problems when it breaks its schema.
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'

export type { Validator } from '../util/ajv.js'
import type { Validator } from '../util/ajv.js'

/** Reads a JSON body, empty meaning {}: INVALID_INPUT 400 when it is not JSON. */
export async function jsonBody(c: Context<Env>): Promise<unknown> {
  const text = await c.req.text()
  if (text.trim() === '') return {}
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new ApiError('INVALID_INPUT', { status: 400, message: 'request body is not valid JSON' })
  }
}

/** Reads a JSON body (empty means {}) and validates it: INVALID_INPUT 400 when not JSON, 422 when invalid. */
export async function body<T>(c: Context<Env>, validate: Validator<T>): Promise<T> {
  const data = await jsonBody(c)
  if (!validate(data)) {
    const errors = (validate.errors ?? []).map((e) => ({
      path: e.instancePath || '/',
      message:
        e.keyword === 'additionalProperties'
          ? `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`
          : (e.message ?? 'invalid'),
    }))
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `invalid body: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      details: { errors },
    })
  }
  return data
}
