/**
 * Every response has X-Request-Id and Cache-Control: no-store; 429 and catalog-required codes have Retry-After.
 * A proxy's answer (retry rule 5: 502, 503 or 504 without the envelope) is not the service's response: a proxy
 * sends its own headers.
 */
import { ERROR_CATALOG } from '../../spec/index.js'
import { ConformanceFailure } from './failure.js'
import { header, isProxyAnswer, targetKind, type ResponseCheck } from './types.js'

export const requiredHeaders: ResponseCheck = {
  name: 'required_headers',
  requirements: [],
  run(ctx) {
    const { operation, response } = ctx
    if (isProxyAnswer(response, targetKind(ctx))) return
    const fail = (message: string) => {
      throw new ConformanceFailure(
        this.name,
        message,
        operation?.operationId,
        header(response, 'x-request-id'),
      )
    }
    if (!header(response, 'x-request-id')) fail('X-Request-Id header is missing')
    if (!/(^|,)\s*no-store\s*(,|$)/.test(header(response, 'cache-control') ?? ''))
      fail('Cache-Control: no-store is missing')
    const code = (response.body as { error?: { code?: string } } | undefined)?.error?.code
    const entry = code
      ? (ERROR_CATALOG as Record<string, { http?: { retry_after?: unknown } }>)[code]?.http
      : undefined
    if (response.status === 429 || entry?.retry_after === true) {
      const retryAfter = header(response, 'retry-after')
      if (!retryAfter || !/^\d+$/.test(retryAfter)) fail('Retry-After (seconds) is missing')
    }
  },
}
