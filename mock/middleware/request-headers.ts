/**
 * Header and parameter rules common to /v1 requests: delegated-access headers or query parameters are refused
 * with 403 ACTING_FORBIDDEN (their names come from the spec's x-delegated-access, an assumed list), and a
 * malformed X-Correlation-Id is 400 INVALID_CORRELATION_ID (its format comes from the spec's CorrelationId
 * parameter, also assumed).
 */
import { openApiSchemas } from '../../spec/index.js'
import { ApiError } from '../errors.js'
import { delegatedAccessNames } from '../http/operations.js'
import { lazy } from '../util/memo.js'
import type { Guard } from './guard.js'
import { headerOf, queryOf } from './node-request.js'

const delegated = delegatedAccessNames()
// Compiled on the first X-Correlation-Id seen, not at module load (start-up makes no ajv instance).
const correlationId = lazy(() =>
  openApiSchemas().at('#/components/parameters/CorrelationId/schema'),
)

export const refuseDelegatedAccess = (): Guard =>
  function refuseDelegatedAccess(c) {
    const header = delegated.headers.find((h) => headerOf(c, h) !== undefined)
    const query = delegated.query.find((q) => queryOf(c, q) !== undefined)
    if (header || query) {
      throw new ApiError('ACTING_FORBIDDEN', {
        message: 'Delegated access is not allowed: a key acts only for its own Project.',
        details: header ? { header } : { parameter: query },
      })
    }
  }

export const checkCorrelationId = (): Guard =>
  function checkCorrelationId(c) {
    const value = headerOf(c, 'x-correlation-id')
    if (value !== undefined && !correlationId()(value)) {
      throw new ApiError('INVALID_CORRELATION_ID', { message: 'X-Correlation-Id is malformed.' })
    }
  }
