/**
 * A JSON response body shows only fields its documented schema names (support/unknown-fields.ts). The
 * document promises additive changes within /v1, so an undocumented field fails only when the suite is strict
 * (support/strictness.ts: the mock by default, or CONFORMANCE_STRICT=1); otherwise it is a warning, once per
 * operation, status and field. Runs after response_schema_conformance, on a body that already matches.
 */
import { bodySchemaPointer, responseInView, viewFor } from '../support/operations.js'
import { reportUnknownFields, undocumentedFields } from '../support/unknown-fields.js'
import { ConformanceFailure } from './failure.js'
import { header, isJson, isProxyAnswer, targetKind, type ResponseCheck } from './types.js'

export const unknownResponseFields: ResponseCheck = {
  name: 'unknown_response_fields',
  requirements: [],
  run(ctx) {
    const { operation, response, strict } = ctx
    if (!operation || !isJson(response)) return
    const kind = targetKind(ctx)
    if (isProxyAnswer(response, kind)) return
    const documented = responseInView(operation, response.status, viewFor(kind))
    if (!documented) return
    const mediaType = (header(response, 'content-type') ?? '').split(';')[0]!.trim()
    const pointer =
      bodySchemaPointer(documented.pointer, mediaType) ??
      bodySchemaPointer(documented.pointer, 'application/json')
    if (!pointer) return
    reportUnknownFields(
      `${operation.operationId} ${response.status}`,
      undocumentedFields(pointer, response.body, viewFor(kind)),
      (message) => {
        throw new ConformanceFailure(
          this.name,
          message,
          operation.operationId,
          header(response, 'x-request-id'),
        )
      },
      strict,
    )
  },
}
