/**
 * Loads the contract files of spec/ and compiles their JSON Schemas with ajv. The mock (request validation)
 * and the conformance suite (response checks) both use this, so the OpenAPI document is the one source of
 * every field rule. A process holds at most two ajv instances for the document, made here on first use:
 * openApiSchemas() (bodies, headers, responses) and openApiQuerySchemas() (query strings, coerced).
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type * as Yaml from 'yaml'
import { packageFile } from './root.js'

// ajv-formats is CommonJS: its callable is the default export's `default` under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

/**
 * Parses YAML text. The parser (a large package) is loaded on first use, not with this module: the built
 * mock reads the document's JSON copy and never needs it.
 */
export function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text)
}

/** Absolute path of a file in spec/. */
export const specFile = (name: string): string => packageFile('spec', name)

/** Absolute path of the OpenAPI document (spec/openapi.yaml), for tools that read it themselves. */
export const OPENAPI_FILE: string = specFile('openapi.yaml')

/** Absolute path of the error catalog (spec/errors.yaml). */
export const ERRORS_FILE: string = specFile('errors.yaml')

/** The OpenAPI document as plain data. */
export type OpenApiDocument = {
  openapi: string
  info: { version: string; [k: string]: unknown }
  paths: Record<string, Record<string, unknown>>
  components: Record<string, Record<string, unknown>>
  webhooks?: Record<string, unknown>
  [k: string]: unknown
}

let cached: OpenApiDocument | undefined

/** Parses spec/openapi.yaml once per process. */
export function loadOpenApi(): OpenApiDocument {
  cached ??= parseOpenApi(readFileSync(specFile('openapi.yaml'), 'utf8'))
  return cached
}

/**
 * The document from its YAML text. The build (scripts/build.mjs) keeps a JSON copy beside the built module
 * (dist/spec/openapi.json) with the SHA-256 of the YAML it came from: when that matches, the copy is read
 * (JSON.parse is many times faster than the YAML parser: most of the built mock's start-up otherwise); when
 * it is absent (run from source) or stale, the YAML is parsed.
 */
function parseOpenApi(text: string): OpenApiDocument {
  try {
    const copy = JSON.parse(readFileSync(new URL('./openapi.json', import.meta.url), 'utf8')) as {
      sha256?: string
      document?: OpenApiDocument
    }
    if (copy.document && copy.sha256 === createHash('sha256').update(text).digest('hex'))
      return copy.document
  } catch {
    // no copy (run from source): parse the YAML
  }
  return parseYaml(text) as OpenApiDocument
}

/** The id under which the whole document is registered in a SpecAjv: refs are `openapi.yaml#/...`. */
export const DOC_ID = 'openapi.yaml'

/**
 * An ajv instance (draft 2020-12, formats) holding the whole OpenAPI document, for `openapi.yaml#/...` refs.
 * Take the shared ones (openApiSchemas, openApiQuerySchemas) rather than making another: each compiles the
 * document's schemas anew.
 */
export class SpecAjv {
  readonly ajv: Ajv2020
  private readonly compiled = new Map<string, ValidateFunction>()

  constructor(
    readonly doc: OpenApiDocument = loadOpenApi(),
    options: { coerceTypes?: boolean } = {},
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, ...options })
    addFormats(this.ajv)
    this.ajv.addFormat('binary', true)
    this.ajv.addFormat('byte', true)
    this.ajv.addSchema(rewriteRefs(doc) as object, DOC_ID)
  }

  /** A validator for the schema at a JSON pointer inside the document, e.g. `#/components/schemas/Turn`. */
  at(pointer: string): ValidateFunction {
    let fn = this.compiled.get(pointer)
    if (!fn) {
      fn = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` })
      this.compiled.set(pointer, fn)
    }
    return fn
  }

  /** A validator for a named component schema. */
  schema(name: string): ValidateFunction {
    return this.at(`#/components/schemas/${escapePointer(name)}`)
  }
}

let schemas: SpecAjv | undefined
let querySchemas: SpecAjv | undefined

/**
 * The process's one SpecAjv for validating data as it is against spec/openapi.yaml: request bodies and
 * headers (the mock), response bodies (the conformance suite), examples (scripts/lint-spec.ts). Validators
 * are compiled once per pointer and cached.
 */
export const openApiSchemas = (): SpecAjv => (schemas ??= new SpecAjv(loadOpenApi()))

/**
 * The process's one coercing SpecAjv, for query parameters: they arrive as strings and are coerced to their
 * schema types while validated (so it cannot be the non-coercing instance).
 */
export const openApiQuerySchemas = (): SpecAjv =>
  (querySchemas ??= new SpecAjv(loadOpenApi(), { coerceTypes: true }))

/** Escapes one JSON-pointer segment (`/` and `~`), e.g. a path like `/v1/runs/{run_id}`. */
export const escapePointer = (segment: string): string =>
  segment.replace(/~/g, '~0').replace(/\//g, '~1')

/** Local refs (`#/components/...`) become refs into the registered document so ajv can resolve them. */
function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs)
  if (node && typeof node === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(node)) {
      out[k] =
        k === '$ref' && typeof v === 'string' && v.startsWith('#') ? DOC_ID + v : rewriteRefs(v)
    }
    return out
  }
  return node
}
