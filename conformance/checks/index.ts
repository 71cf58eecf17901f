/** RESPONSE_CHECKS: the ordered list of named checks run on every response the suite sees. */
import { errorEnvelopeConformance } from './error-envelope-conformance.js'
import { notAServerError } from './not-a-server-error.js'
import { requiredHeaders } from './required-headers.js'
import { responseSchemaConformance } from './response-schema-conformance.js'
import { statusCodeConformance } from './status-code-conformance.js'
import { unknownResponseFields } from './unknown-response-fields.js'
import type { CheckContext, ResponseCheck } from './types.js'

export const RESPONSE_CHECKS: readonly ResponseCheck[] = [
  notAServerError,
  requiredHeaders,
  statusCodeConformance,
  errorEnvelopeConformance,
  responseSchemaConformance,
  unknownResponseFields,
]

/** Runs every check; the first failure is thrown. */
export function runChecks(
  ctx: CheckContext,
  checks: readonly ResponseCheck[] = RESPONSE_CHECKS,
): void {
  for (const check of checks) check.run(ctx)
}

export { ConformanceFailure } from './failure.js'
export type { CheckContext, CheckedResponse, ResponseCheck } from './types.js'
