/**
 * Every ajv instance of the mock, one per purpose, so their options are read side by side. The OpenAPI
 * document's own instances (request bodies, headers and queries) are spec/openapi.ts's openApiSchemas() and
 * openApiQuerySchemas(), shared with the conformance suite. Each instance is made once; callers compile a
 * schema once and keep the function (never per request).
 */
import { _ } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import standaloneCodeModule from 'ajv/dist/standalone/index.js'
import addFormatsModule from 'ajv-formats'
import { lazy } from './memo.js'

// ajv-formats is CommonJS: its callable is the default export's `default` under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default
const standaloneCode = standaloneCodeModule as unknown as typeof standaloneCodeModule.default

/**
 * A workflow's input_schema (RUN-024, routes/workflows.ts): every problem reported (error.details.errors),
 * formats checked, not strict (a publisher's schema may carry keywords ajv does not know).
 */
export const workflowInputAjv = new Ajv2020({ strict: false, allErrors: true })
addFormats(workflowInputAjv)

/**
 * The JSON Schema of a result contract entry (ERR-050, domain/output-rules.ts): the first problem is enough
 * for the message; not strict; no format vocabulary added (as the contract check has always run).
 */
export const resultContractAjv = new Ajv2020({ strict: false, allErrors: false })

/** The mock-only control API's bodies (/_mock, routes/control*.ts): the mock's own schemas, strict. */
export const controlBodyAjv = new Ajv2020({ allErrors: true, strict: true })

/** The fixture world file's schema (fixtures/world.schema.json, fixtures/world-validator.ts): strict. */
const FIXTURE_WORLD_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true } as const

/** The fixture world's instance, made on first use. */
export const fixtureWorldAjv = lazy(() => {
  const ajv = new Ajv2020(FIXTURE_WORLD_OPTIONS)
  addFormats(ajv)
  return ajv
})

/** The fixture world's validator as ajv standalone code (CommonJS), from the same settings, for the build. */
export function fixtureWorldStandaloneSource(schema: object): string {
  const ajv = new Ajv2020({
    ...FIXTURE_WORLD_OPTIONS,
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  })
  addFormats(ajv)
  return standaloneCode(ajv, ajv.compile(schema))
}
