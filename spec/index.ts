/**
 * The only import point of spec/ for the mock, the conformance suite and the scripts: the error catalog,
 * the OpenAPI document and its compiled schemas, the requirement catalog and the generated types.
 */
export * from './generated/errors.js'
import { ERROR_CATALOG } from './generated/errors.js'
export type { paths, components, operations, webhooks } from './generated/openapi.js'
export {
  loadOpenApi,
  SpecAjv,
  openApiSchemas,
  openApiQuerySchemas,
  specFile,
  OPENAPI_FILE,
  ERRORS_FILE,
  escapePointer,
  DOC_ID,
  type OpenApiDocument,
} from './openapi.js'
export { PACKAGE_ROOT, PACKAGE_VERSION, packageFile } from './root.js'
export { loadRequirements, type Requirement, type RequirementCatalog } from './requirements.js'

/** One row of the document's "Next step after a failed execution" table, as spec/errors.yaml holds it. */
export type NextStep = { decision: string; action: string }

/** The document's step for a failed-execution code its table does not list (RETRY-016). */
export const UNLISTED_NEXT_STEP: NextStep = {
  decision: 'not listed',
  action: 'do not run again; stop and tell a person',
}

/**
 * RETRY-008..016: what a client does after an execution failed with `code`: the table's row from
 * spec/errors.yaml (`next_step`), or UNLISTED_NEXT_STEP for any other code, unknown codes included.
 */
export function nextStepAfter(code: string): NextStep {
  const entry = (ERROR_CATALOG as Record<string, { next_step?: NextStep }>)[code]
  return entry?.next_step ?? UNLISTED_NEXT_STEP
}
