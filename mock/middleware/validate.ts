/**
 * Request validation driven by spec/openapi.yaml: the schemas are compiled once with ajv and nothing here
 * re-types a field rule. Idempotency-Key must be 1-256 bytes (422 INVALID_IDEMPOTENCY_KEY); a body that breaks
 * its schema is 422 INVALID_INPUT, or 422 LIMIT_OUT_OF_RANGE when only `limits` values are out of range
 * (never lowered); a query value that breaks its schema is 422 INVALID_INPUT, a malformed cursor 400
 * INVALID_CURSOR. An absent body of an EmptyInput operation counts as {}.
 */
import type { ErrorObject } from 'ajv'
import {
  loadOpenApi,
  openApiQuerySchemas,
  openApiSchemas,
  type HttpErrorCode,
} from '../../spec/index.js'
import { ApiError, apiErrorOf } from '../errors.js'
import type { OperationSpec } from '../http/operations.js'
import type { Guard } from './guard.js'
import { headerOf, queryOf } from './node-request.js'

const doc = loadOpenApi()

const RANGE_KEYWORDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])

/**
 * Top-level body properties whose own schema names the code a breach of it earns (`x-error-code`, e.g.
 * file_ids: more than 20 or one listed twice is 422 TOO_MANY_FILES): instance path -> code.
 */
function propertyCodes(pointer: string): Map<string, HttpErrorCode> {
  let schema = schemaAt(pointer)
  while (typeof schema.$ref === 'string') schema = schemaAt(schema.$ref)
  const codes = new Map<string, HttpErrorCode>()
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
  for (const [name, prop] of Object.entries(props)) {
    const code = prop['x-error-code']
    if (typeof code === 'string') codes.set(`/${name}`, code as HttpErrorCode)
  }
  return codes
}

/** The JSON schema object at a pointer of the document (to see whether a body is EmptyInput). */
const schemaAt = (pointer: string): Record<string, unknown> =>
  pointer
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((acc, k) => (acc as Record<string, unknown>)[k], doc) as Record<
    string,
    unknown
  >

/** Readable problems for error.details: field (JSON pointer) and what is wrong. */
const problems = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).slice(0, 20).map((e) => ({
    field: e.instancePath || '/',
    problem:
      e.keyword === 'additionalProperties'
        ? `undeclared field ${String(e.params.additionalProperty)}`
        : (e.message ?? e.keyword),
  }))

/** Idempotency-Key: present and 1 to 256 bytes (IDEM, EP rules). */
export const requireIdempotencyKey = (): Guard =>
  function requireIdempotencyKey(c) {
    const key = headerOf(c, 'idempotency-key')
    // Node hands header values over as latin1 strings: one character per byte on the wire. A string built in
    // process (app.request) may hold wider characters: those count as their UTF-8 bytes.
    const bytes =
      key === undefined
        ? 0
        : // eslint-disable-next-line no-control-regex -- every latin1 character is one wire byte
          /^[\x00-\xff]*$/.test(key)
          ? key.length
          : Buffer.byteLength(key, 'utf8')
    if (key === undefined || bytes < 1 || bytes > 256) {
      throw new ApiError('INVALID_IDEMPOTENCY_KEY', { details: { bytes } })
    }
    c.set(
      'input',
      Object.assign({ body: undefined, query: {} }, c.var.input, { idempotencyKey: key }),
    )
  }

/** An optional Idempotency-Key (closeSession): when sent, the same checks as a required one. */
export const optionalIdempotencyKey = (): Guard => {
  const check = requireIdempotencyKey()
  return function optionalIdempotencyKey(c) {
    if (headerOf(c, 'idempotency-key') !== undefined) return check(c)
  }
}

/** An operation's compiled body and query checks. */
function compileChecks(op: OperationSpec) {
  return {
    validateBody:
      op.body?.mediaType === 'application/json' ? openApiSchemas().at(op.body.pointer) : undefined,
    codes: op.body ? propertyCodes(op.body.pointer) : new Map<string, HttpErrorCode>(),
    emptyInput: op.body
      ? schemaAt(op.body.pointer).$ref === '#/components/schemas/EmptyInput'
      : false,
    validateQuery: op.query.map((p) => ({ ...p, validate: openApiQuerySchemas().at(p.pointer) })),
  }
}

/**
 * The operation's checks are compiled on its first request, not when the routes are registered: start-up
 * then compiles no schema, nor makes the document's ajv instances (a mock started for a test suite may use a
 * handful of its operations).
 */
export const validateRequest = (op: OperationSpec): Guard => {
  let checks: ReturnType<typeof compileChecks> | undefined
  return function validateRequest(c) {
    checks ??= compileChecks(op)
    const { validateBody, codes, emptyInput, validateQuery } = checks
    const input = c.var.input ?? { body: undefined, query: {} }
    const query: Record<string, unknown> = {}
    for (const p of validateQuery) {
      const raw = queryOf(c, p.name)
      if (raw === undefined) continue
      // ajv coerces a root scalar only for the check; coerceScalar gives the typed value back.
      if (!p.validate(raw)) {
        if (p.name === 'after')
          throw new ApiError('INVALID_CURSOR', { details: { parameter: p.name } })
        // ERR-023: a value outside its allowed range or schema is 422 (400 is for a bad cursor).
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: `Query parameter ${p.name} is out of range or malformed.`,
          details: { parameter: p.name, errors: problems(p.validate.errors) },
        })
      }
      query[p.name] = coerceScalar(raw, schemaAt(p.pointer))
    }
    let body = input.body
    if (validateBody) {
      if (body === undefined && emptyInput) body = {}
      if (body === undefined) {
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: 'This operation needs a JSON body.',
        })
      }
      if (!validateBody(body)) {
        const errors = validateBody.errors ?? []
        const onlyLimits =
          errors.length > 0 &&
          errors.every(
            (e) => e.instancePath.startsWith('/limits/') && RANGE_KEYWORDS.has(e.keyword),
          )
        // A breach of a property that names its own code (SIZE-008: TOO_MANY_FILES) wins over INVALID_INPUT.
        const own = errors.find((e) => codes.has(e.instancePath))
        if (own) {
          throw apiErrorOf(codes.get(own.instancePath)!, {
            message: `${own.instancePath.slice(1)}: ${own.message ?? own.keyword}.`,
            details: { errors: problems([own]) },
          })
        }
        if (onlyLimits) {
          throw new ApiError('LIMIT_OUT_OF_RANGE', {
            message:
              'A limits value is outside its documented range; it is never lowered silently.',
            details: { errors: problems(errors) },
          })
        }
        throw new ApiError('INVALID_INPUT', {
          status: 422,
          message: 'The request body does not match its schema (undeclared fields are refused).',
          details: { errors: problems(errors) },
        })
      }
    }
    c.set('input', Object.assign({}, input, { body, query }))
  }
}

/** The typed value of a valid query string for its schema (integer or number; else the string). */
function coerceScalar(raw: string, schema: Record<string, unknown>): unknown {
  return schema.type === 'integer' || schema.type === 'number' ? Number(raw) : raw
}
