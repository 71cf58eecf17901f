/**
 * A JSON response body is valid against the schema documented for its operation and status, in the view of
 * the contract its target is judged by (support/document-view.ts): the full view for the mock (in this process
 * or over HTTP), the document-only view for a real target. On a real target a body valid in the document view
 * that the full view refuses (an error code or content kind added after 1.3.0, another choice where the mock's
 * shape is x-assumed or not shown) passes with a warning naming what differs. A proxy's answer is not judged.
 */
import type { ErrorObject } from 'ajv'
import {
  bodyValidator,
  responseInView,
  schemasOf,
  viewFor,
  type Operation,
} from '../support/operations.js'
import { warn } from '../support/warnings.js'
import { ConformanceFailure } from './failure.js'
import { header, isJson, isProxyAnswer, targetKind, type ResponseCheck } from './types.js'

/** Ajv's errors in a form that does not depend on array positions, for the warning's key. */
const shapeOf = (errors: readonly ErrorObject[] | null | undefined): string =>
  [
    ...new Set(
      (errors ?? []).map((e) => `${e.instancePath.replace(/\/\d+(?=\/|$)/g, '/*')} ${e.keyword}`),
    ),
  ].join('; ')

export const responseSchemaConformance: ResponseCheck = {
  name: 'response_schema_conformance',
  requirements: [],
  run(ctx) {
    const { operation, response } = ctx
    if (!operation || !isJson(response)) return
    const kind = targetKind(ctx)
    if (isProxyAnswer(response, kind)) return
    const view = viewFor(kind)
    const documented = responseInView(operation, response.status, view)
    if (!documented) return
    const mediaType = (header(response, 'content-type') ?? '').split(';')[0]!.trim()
    const validatorIn = (view: ReturnType<typeof viewFor>) =>
      bodyValidator(documented.pointer, mediaType, view) ??
      bodyValidator(documented.pointer, 'application/json', view)
    const validate = validatorIn(view)
    if (!validate) return
    if (!validate(response.body)) {
      throw new ConformanceFailure(
        this.name,
        `body does not match the documented schema of ${response.status}: ${schemasOf(view).ajv.errorsText(validate.errors)}`,
        operation.operationId,
        header(response, 'x-request-id'),
      )
    }
    if (view === 'full') return
    const full = validatorIn('full')
    if (full && !full(response.body)) reportChoice(operation, response.status, full.errors)
  },
}

function reportChoice(
  operation: Operation,
  status: number,
  errors: readonly ErrorObject[] | null | undefined,
): void {
  const where = `${operation.operationId} ${status}`
  warn(
    `document view ${where}: ${shapeOf(errors)}`,
    `${where}: the body is valid by the document but not by the mock's full contract ` +
      `(an error code or content kind added after 1.3.0, or another choice where spec/openapi.yaml is ` +
      `x-assumed or not shown): ${schemasOf('full').ajv.errorsText(errors ? [...errors] : null)}`,
  )
}
