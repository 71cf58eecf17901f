/**
 * The operation table of the mock, read from spec/openapi.yaml at start: for every operationId its method and
 * path, security (API key scopes, owner token or download token), call-rate class, whether Idempotency-Key is
 * required, and where its request body and query schemas live. Route modules only name an operationId and
 * give a handler; everything the document says about the request comes from here.
 */
import { lazy } from '../util/memo.js'
import { escapePointer, loadOpenApi, type OpenApiDocument } from '../../spec/index.js'
import type { RateClass } from '../domain/rate-limits.js'

export type Security =
  | { kind: 'apiKey'; scopes: string[][] } // alternatives; each inner list must all be held
  | { kind: 'ownerToken' }
  | { kind: 'downloadToken' }

export type QueryParam = { name: string; required: boolean; pointer: string }

export type OperationSpec = {
  operationId: string
  method: string
  /** The document's path template, e.g. /v1/runs/{run_id}. */
  path: string
  /** The same path in Hono's syntax, e.g. /v1/runs/:run_id. */
  honoPath: string
  security: Security
  rateClass: RateClass | undefined
  /** The operation requires Idempotency-Key. */
  idempotent: boolean
  /** The operation takes an optional Idempotency-Key: honoured (stored answer, conflicts) when sent. */
  idempotencyOptional: boolean
  body:
    | { mediaType: 'application/json' | 'multipart/form-data'; pointer: string; required: boolean }
    | undefined
  query: QueryParam[]
  assumed: boolean
  /**
   * `x-scope-by-body`: which of the security alternatives applies depends on the body, so the handler checks
   * the scopes (after validation) and answers with the code the document gives for the body's kind.
   */
  scopeByBody: boolean
}

type Json = Record<string, unknown>
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** Resolves one local `$ref` of the document. */
function deref(doc: OpenApiDocument, node: unknown): Json {
  const ref = (node as Json | undefined)?.$ref
  if (typeof ref !== 'string') return (node ?? {}) as Json
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((acc, key) => (acc as Json)[key], doc) as Json
}

function securityOf(doc: OpenApiDocument, op: Json): Security {
  const reqs = (op.security ?? doc.security ?? []) as Record<string, string[]>[]
  const names = new Set(reqs.flatMap((r) => Object.keys(r)))
  if (names.has('downloadToken')) return { kind: 'downloadToken' }
  if (names.has('ownerToken')) return { kind: 'ownerToken' }
  return { kind: 'apiKey', scopes: reqs.map((r) => r.apiKey ?? []) }
}

/** Builds the table from the OpenAPI document (once at start). */
export function loadOperations(doc: OpenApiDocument = loadOpenApi()): Map<string, OperationSpec> {
  const table = new Map<string, OperationSpec>()
  for (const [path, item] of Object.entries(doc.paths)) {
    const shared = ((item as Json).parameters ?? []) as unknown[]
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined
      if (!op) continue
      const base = `#/paths/${escapePointer(path)}/${method}`
      const params = [...shared, ...((op.parameters ?? []) as unknown[])].map((p, i) => ({
        p: deref(doc, p),
        i,
        own: i >= shared.length,
      }))
      const query: QueryParam[] = []
      let idempotent = false
      let idempotencyOptional = false
      for (const { p, i, own } of params) {
        if (p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key') {
          if (p.required === true) idempotent = true
          else idempotencyOptional = true
        }
        if (p.in === 'query' && p.name !== 'token') {
          const raw = own ? (op.parameters as unknown[])[i - shared.length] : shared[i]
          const ref = (raw as Json).$ref
          const pointer =
            typeof ref === 'string'
              ? `${ref}/schema`
              : own
                ? `${base}/parameters/${i - shared.length}/schema`
                : `#/paths/${escapePointer(path)}/parameters/${i}/schema`
          query.push({ name: String(p.name), required: p.required === true, pointer })
        }
      }
      let body: OperationSpec['body']
      if (op.requestBody) {
        const rb = deref(doc, op.requestBody)
        const rbPointer =
          typeof (op.requestBody as Json).$ref === 'string'
            ? String((op.requestBody as Json).$ref)
            : `${base}/requestBody`
        const content = (rb.content ?? {}) as Json
        const mediaType =
          'multipart/form-data' in content ? 'multipart/form-data' : 'application/json'
        body = {
          mediaType,
          pointer: `${rbPointer}/content/${escapePointer(mediaType)}/schema`,
          required: rb.required === true,
        }
      }
      const rateClass = op['x-rate-class'] as RateClass | undefined
      table.set(String(op.operationId), {
        operationId: String(op.operationId),
        method: method.toUpperCase(),
        path,
        honoPath: path.replace(/\{([^}]+)\}/g, ':$1'),
        security: securityOf(doc, op),
        rateClass,
        idempotent,
        idempotencyOptional,
        body,
        query,
        assumed: op['x-assumed'] === true,
        scopeByBody: op['x-scope-by-body'] !== undefined,
      })
    }
  }
  return table
}

/** The delegated-access headers and query parameters refused with ACTING_FORBIDDEN (x-delegated-access). */
export function delegatedAccessNames(doc: OpenApiDocument = loadOpenApi()): {
  headers: string[]
  query: string[]
} {
  const ext = (doc['x-delegated-access'] ?? {}) as { headers?: string[]; query?: string[] }
  return { headers: (ext.headers ?? []).map((h) => h.toLowerCase()), query: ext.query ?? [] }
}

/**
 * STATE-019: the scopes an execution needs for as long as it runs, by kind: those of the operation that
 * accepted it (createRun: workflows:run; Session creation: none, x-assumed-scope). Each entry lists
 * alternatives; one of them held in full is enough.
 */
export const acceptScopes = lazy((): Record<'RUN' | 'TURN', string[][]> => {
  const ops = loadOperations()
  const scopesOf = (operationId: string): string[][] => {
    const security = ops.get(operationId)?.security
    return security?.kind === 'apiKey' ? security.scopes : [[]]
  }
  return { RUN: scopesOf('createRun'), TURN: scopesOf('createSession') }
})
