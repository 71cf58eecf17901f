/** No 5xx answer except the catalog's documented server-side codes (INTERNAL_ERROR and the 503 family). */
import { ConformanceFailure } from './failure.js'
import { httpEntry, statusAllowed } from './error-envelope-conformance.js'
import { header, type ResponseCheck } from './types.js'

export const notAServerError: ResponseCheck = {
  name: 'not_a_server_error',
  requirements: [],
  run({ operation, response }) {
    if (response.status < 500) return
    const code = (response.body as { error?: { code?: string } } | undefined)?.error?.code
    const entry = code ? httpEntry(code) : undefined
    if (code === 'INTERNAL_ERROR' || !entry || !statusAllowed(entry, response.status)) {
      throw new ConformanceFailure(
        this.name,
        `server error ${response.status} ${code ?? ''}`.trim(),
        operation?.operationId,
        header(response, 'x-request-id'),
      )
    }
  },
}
