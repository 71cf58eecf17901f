/**
 * Every ajv instance of the mock, one per purpose, so their options are read side by side. The OpenAPI
 * document's own instances (request bodies, headers and queries) are spec/openapi.ts's openApiSchemas() and
 * openApiQuerySchemas(), shared with the conformance suite. Each instance is made once; callers compile a
 * schema once and keep the function (never per request).
 */
import { _, type ErrorObject } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import standaloneCodeModule from 'ajv/dist/standalone/index.js'
import addFormatsModule from 'ajv-formats'
import { lazy } from './memo.js'

// ajv-formats is CommonJS: its callable is the default export's `default` under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default
const standaloneCode = standaloneCodeModule as unknown as typeof standaloneCodeModule.default

/**
 * A workflow's input_schema (RUN-024, routes/workflows.ts): every problem reported (error.details.errors),
 * formats checked, not strict (a publisher's schema may carry keywords ajv does not know). Made on first use,
 * as every instance here: start-up makes none.
 */
export const workflowInputAjv = lazy(() => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  return ajv
})

/**
 * The JSON Schema of a result contract entry (ERR-050, domain/output-rules.ts): the first problem is enough
 * for the message; not strict; no format vocabulary added (as the contract check has always run).
 */
export const resultContractAjv = lazy(() => new Ajv2020({ strict: false, allErrors: false }))

/** A validator as the control API uses it: a type guard with the last call's errors. */
export type Validator<T> = ((data: unknown) => data is T) & { errors?: ErrorObject[] | null }

const controlAjv = lazy(() => new Ajv2020({ allErrors: true, strict: true }))
// The control API's schema constants, registered as their modules load (the same for every instance, as the
// compiled validators always were); never changed after that.
// eslint-disable-next-line no-restricted-syntax
const controlSchemas: object[] = []

/**
 * The mock-only control API's bodies (/_mock, routes/control*.ts, faults/rules.ts): the mock's own schemas,
 * strict. A schema is compiled on its first use, not when its module loads (most control endpoints are never
 * called in a run, and compiling them all was a tenth of start-up); `compileAllControlSchemas()` lets a test
 * compile every one, so a broken schema still fails the tests rather than a request.
 */
export const controlBodyAjv = {
  compile<T>(schema: object): Validator<T> {
    controlSchemas.push(schema)
    const compiled = lazy(() => controlAjv().compile<T>(schema))
    const validate = ((data: unknown) => compiled()(data)) as Validator<T>
    Object.defineProperty(validate, 'errors', { get: () => compiled().errors })
    return validate
  },
}

/** Compiles every control schema registered so far (modules loaded); returns how many. */
export function compileAllControlSchemas(): number {
  for (const schema of controlSchemas) controlAjv().compile(schema)
  return controlSchemas.length
}

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
