/** A JSON response body is valid against the schema documented for its operation and status. */
import { bodyValidator, documentedResponse, specAjv } from '../support/operations.js'
import { ConformanceFailure } from './failure.js'
import { header, isJson, type ResponseCheck } from './types.js'

export const responseSchemaConformance: ResponseCheck = {
  name: 'response_schema_conformance',
  requirements: [],
  run({ operation, response }) {
    if (!operation || !isJson(response)) return
    const documented = documentedResponse(operation, response.status)
    if (!documented) return
    const mediaType = (header(response, 'content-type') ?? '').split(';')[0]!.trim()
    const validate =
      bodyValidator(documented.pointer, mediaType) ??
      bodyValidator(documented.pointer, 'application/json')
    if (!validate) return
    if (!validate(response.body)) {
      throw new ConformanceFailure(
        this.name,
        `body does not match the documented schema of ${response.status}: ${specAjv.ajv.errorsText(validate.errors)}`,
        operation.operationId,
        header(response, 'x-request-id'),
      )
    }
  },
}
