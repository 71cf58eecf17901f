/**
 * The status of every response to a documented operation is one the document lists for it (the operation's
 * responses in spec/openapi.yaml). A proxy's answer (retry rule 5) is not the service's and is not judged.
 *
 * On a real target an error status the operation's list does not name is accepted with a warning when it is a
 * 4xx or 5xx answered with a well-formed envelope whose code the error catalog gives that very status: the
 * catalog (spec/errors.yaml) is the document's own Codes table, while the per-operation lists are this
 * project's reading of which codes an operation meets (the document gives no list per operation), so a
 * catalog code at its catalog status is an answer the document defines. The catalog's retryable is still
 * checked (error_envelope_conformance). A code outside the catalog, a catalog code at another status, and any
 * undocumented success status still fail, except where the operation's one success status is itself x-assumed
 * (the document gives none: webhook registration, rotation and replay, works, preparation answers): another 2xx
 * is then a warning and its body is judged as that answer (responseInView of support/operations.ts). The mock
 * (either kind) is held to its lists exactly.
 */
import { documentedResponse, responseInView } from '../support/operations.js'
import { warn } from '../support/warnings.js'
import { httpEntry, statusAllowed } from './error-envelope-conformance.js'
import { ConformanceFailure } from './failure.js'
import { envelopeOf, header, isProxyAnswer, targetKind, type ResponseCheck } from './types.js'

export const statusCodeConformance: ResponseCheck = {
  name: 'status_code_conformance',
  requirements: [],
  run(ctx) {
    const { operation, response } = ctx
    if (!operation) return
    const kind = targetKind(ctx)
    if (isProxyAnswer(response, kind)) return
    if (documentedResponse(operation, response.status)) return
    const documented = Object.keys(operation.responses).join(', ')
    const assumed =
      kind === 'real' ? responseInView(operation, response.status, 'document') : undefined
    if (assumed?.assumedStatus) {
      warn(
        `assumed success status ${operation.operationId} ${response.status}`,
        `${operation.operationId}: answered ${response.status}, not the mock's ${assumed.key} ` +
          `(x-assumed: the document gives the operation no success status); judged as that answer`,
      )
      return
    }
    if (kind === 'real' && response.status >= 400 && response.status < 600) {
      const error = envelopeOf(response)
      const entry = error ? httpEntry(error.code) : undefined
      if (error && entry && statusAllowed(entry, response.status)) {
        warn(
          `undocumented status ${operation.operationId} ${response.status} ${error.code}`,
          `${operation.operationId}: status ${response.status} is not in the operation's list (${documented}) ` +
            `but is the catalog's status of ${error.code}: accepted (the catalog is the document's Codes table)`,
        )
        return
      }
    }
    throw new ConformanceFailure(
      this.name,
      `status ${response.status} is not documented (documented: ${documented})`,
      operation.operationId,
      header(response, 'x-request-id'),
    )
  },
}
