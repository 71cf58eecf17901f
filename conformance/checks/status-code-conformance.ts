/** The status of every response to a documented operation is one the document lists for it. */
import { documentedResponse } from '../support/operations.js'
import { ConformanceFailure } from './failure.js'
import { header, type ResponseCheck } from './types.js'

export const statusCodeConformance: ResponseCheck = {
  name: 'status_code_conformance',
  requirements: [],
  run({ operation, response }) {
    if (!operation) return
    if (!documentedResponse(operation, response.status)) {
      throw new ConformanceFailure(
        this.name,
        `status ${response.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`,
        operation.operationId,
        header(response, 'x-request-id'),
      )
    }
  },
}
