/**
 * The only import point of spec/ for the mock, the conformance suite and the scripts: the error catalog,
 * the OpenAPI document and its compiled schemas, the requirement catalog and the generated types.
 */
export * from './generated/errors.js'
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
