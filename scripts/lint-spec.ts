/**
 * Lints spec/openapi.yaml: the standard OpenAPI linter (Redocly, recommended rules, redocly.yaml), then the
 * project's own contract checks: every example validates against its own schema, the ErrorCode enum equals the
 * keys of spec/errors.yaml, example error envelopes agree with the catalog, and every response documents the
 * headers the interface document puts on every response.
 */
import { lint, loadConfig } from '@redocly/openapi-core'
import {
  ERROR_CATALOG,
  escapePointer,
  loadOpenApi,
  openApiSchemas,
  specFile,
} from '../spec/index.js'

type Json = Record<string, unknown>
const problems: string[] = []
const fail = (where: string, message: string) => problems.push(`${where}: ${message}`)
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

// 1. The standard linter.
const config = await loadConfig({
  configPath: new URL('../redocly.yaml', import.meta.url).pathname,
})
const results = await lint({ ref: specFile('openapi.yaml'), config })
for (const p of results) {
  const where = p.location[0]?.pointer ?? '#'
  if (p.severity === 'error') fail(`redocly ${p.ruleId} ${where}`, p.message)
}
const warnings = results.filter((p) => p.severity !== 'error').length

const doc = loadOpenApi()
const ajv = openApiSchemas()

/** Resolves a local `$ref` (one level) to the object it names. */
function deref(node: unknown): unknown {
  if (isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    return node.$ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((acc, key) => (isObject(acc) ? acc[key] : undefined), doc)
  }
  return node
}

/** Validates the example(s) of a media type or parameter object against its schema pointer. */
function checkExamples(where: string, holder: Json, schemaPointer: string) {
  const samples: [string, unknown][] = []
  if ('example' in holder) samples.push(['example', holder.example])
  if (isObject(holder.examples)) {
    for (const [name, ex] of Object.entries(holder.examples)) {
      const resolved = deref(ex)
      if (isObject(resolved) && 'value' in resolved)
        samples.push([`examples.${name}`, resolved.value])
    }
  }
  if (samples.length === 0 || !('schema' in holder)) return samples.length
  const validate = ajv.at(schemaPointer)
  for (const [name, value] of samples) {
    if (typeof value === 'string' && isObject(holder.schema) && holder.schema.type === 'string')
      continue
    if (!validate(value)) fail(`${where} ${name}`, ajv.ajv.errorsText(validate.errors))
  }
  return samples.length
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
let exampleCount = 0

// 2. Every response, request body and parameter example validates; every response has an example and headers.
function checkOperation(base: string, op: Json, ownResponse = true) {
  const responses = isObject(op.responses) ? op.responses : {}
  for (const [status, raw] of Object.entries(responses)) {
    const res = deref(raw)
    const resPointer =
      isObject(raw) && typeof raw.$ref === 'string' ? raw.$ref : `${base}/responses/${status}`
    const where = `${resPointer} (${base})`
    if (!isObject(res)) continue
    const headers = isObject(res.headers) ? res.headers : {}
    // The service's own responses carry these headers; a webhook's response is the receiver's, not ours.
    for (const h of ownResponse ? ['X-Request-Id', 'Cache-Control'] : []) {
      if (!(h in headers)) fail(where, `response lacks the ${h} header`)
    }
    const content = isObject(res.content) ? res.content : {}
    if (Object.keys(content).length === 0 && status !== '204')
      fail(where, 'response has no content')
    for (const [mediaType, media] of Object.entries(content)) {
      if (!isObject(media)) continue
      const n = checkExamples(
        `${where} ${mediaType}`,
        media,
        `${resPointer}/content/${escapePointer(mediaType)}/schema`,
      )
      if (n === 0) fail(`${where} ${mediaType}`, 'response has no example')
      exampleCount += n
      if (ownResponse && Number(status) >= 400) {
        for (const [, value] of exampleValues(media)) checkEnvelope(where, status, headers, value)
      }
    }
  }
  const body = deref(op.requestBody)
  if (isObject(body) && isObject(body.content)) {
    const bodyPointer =
      isObject(op.requestBody) && typeof op.requestBody.$ref === 'string'
        ? op.requestBody.$ref
        : `${base}/requestBody`
    for (const [mediaType, media] of Object.entries(body.content)) {
      if (isObject(media)) {
        exampleCount += checkExamples(
          `${base} requestBody ${mediaType}`,
          media,
          `${bodyPointer}/content/${escapePointer(mediaType)}/schema`,
        )
      }
    }
  }
}

function exampleValues(media: Json): [string, unknown][] {
  const out: [string, unknown][] = []
  if ('example' in media) out.push(['example', media.example])
  if (isObject(media.examples)) {
    for (const [name, ex] of Object.entries(media.examples)) {
      const r = deref(ex)
      if (isObject(r) && 'value' in r) out.push([name, r.value])
    }
  }
  return out
}

// 3. Example error envelopes agree with the catalog: status allowed for the code, same retryable flag.
function checkEnvelope(where: string, status: string, headers: Json, value: unknown) {
  if (!isObject(value) || !isObject(value.error)) return
  const code = value.error.code as keyof typeof ERROR_CATALOG
  const entry = ERROR_CATALOG[code] as
    | {
        http?: {
          status: readonly number[]
          retryable: boolean
          retry_after?: unknown
          status_class?: string
        }
      }
    | undefined
  if (!entry?.http) return fail(where, `example code ${String(code)} is not an HTTP error code`)
  const n = Number(status)
  const allowed =
    entry.http.status_class === '4xx' ? n >= 400 && n < 500 : entry.http.status.includes(n)
  if (!allowed) fail(where, `example code ${code} is not documented with status ${status}`)
  if (value.error.retryable !== entry.http.retryable)
    fail(where, `example ${code} retryable differs from the catalog`)
  if (entry.http.retry_after && !('Retry-After' in headers))
    fail(where, `${code} response lacks Retry-After`)
}

for (const [path, item] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const op = item[method]
    if (isObject(op)) checkOperation(`#/paths/${escapePointer(path)}/${method}`, op)
  }
}
for (const [name, item] of Object.entries(doc.webhooks ?? {})) {
  for (const method of METHODS) {
    const op = isObject(item) ? item[method] : undefined
    if (isObject(op)) checkOperation(`#/webhooks/${escapePointer(name)}/${method}`, op, false)
  }
}

// Schema-level `examples` arrays in components.
for (const [name, schema] of Object.entries(doc.components.schemas ?? {})) {
  if (isObject(schema) && Array.isArray(schema.examples)) {
    const validate = ajv.schema(name)
    for (const ex of schema.examples) {
      exampleCount++
      if (!validate(ex))
        fail(`#/components/schemas/${name} examples`, ajv.ajv.errorsText(validate.errors))
    }
  }
}

// 4. The ErrorCode enum is exactly the catalog, in the catalog's order.
const enumCodes = (doc.components.schemas?.ErrorCode as Json | undefined)?.enum
const catalogCodes = Object.keys(ERROR_CATALOG)
if (JSON.stringify(enumCodes) !== JSON.stringify(catalogCodes)) {
  fail(
    '#/components/schemas/ErrorCode',
    'enum differs from the keys of spec/errors.yaml (same codes, same order)',
  )
}
if (doc.info.version !== '1.3.0')
  fail('#/info/version', `is ${doc.info.version}, the document says 1.3.0`)
if (doc['x-error-catalog'] !== './errors.yaml')
  fail('#/x-error-catalog', 'must reference ./errors.yaml')

if (problems.length > 0) {
  console.error(problems.join('\n'))
  console.error(`\nspec/openapi.yaml: ${problems.length} problem(s)`)
  process.exit(1)
}
console.log(
  `spec/openapi.yaml lints clean (${warnings} linter warnings); ${exampleCount} examples valid`,
)
