/**
 * The documented operations of spec/openapi.yaml as the suite needs them for table-driven tests: method, path
 * template, how the request is authenticated, the scopes the document names, whether the operation is an
 * x-assumed one, its call-rate class and whether it needs an Idempotency-Key. Also the assumed delegated-access
 * names (x-delegated-access) and sample paths with ids filled in.
 */
import { randomUUID } from 'node:crypto'
import { loadOpenApi } from '../../spec/index.js'

export type DocumentedOperation = {
  operationId: string
  method: string
  template: string
  auth: 'apiKey' | 'ownerToken' | 'downloadToken' | 'none'
  /** Scope alternatives of an API-key operation (each inner list must all be held); [] when none is named. */
  scopes: string[][]
  /** The document names the scope (no x-assumed-scope). */
  scopeNamed: boolean
  /** The operation itself is x-assumed (path or shape not shown by the document). */
  assumed: boolean
  rateClass: 'accept' | 'read' | undefined
  idempotent: boolean
  body: 'json' | 'multipart' | undefined
}

type Json = Record<string, unknown>
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const
const doc = loadOpenApi() as unknown as {
  paths: Record<string, Json>
  components: { parameters: Record<string, Json> }
  'x-delegated-access'?: { headers?: string[]; query?: string[] }
}

/** The node itself, or what its `$ref` (a local `#/...` pointer) points at in spec/openapi.yaml. */
export const deref = (node: unknown): Json => {
  const ref = (node as Json | undefined)?.$ref
  if (typeof ref !== 'string') return (node ?? {}) as Json
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((acc, k) => (acc as Json)[k], doc) as Json
}

const operations: DocumentedOperation[] = []
for (const [template, item] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const op = item[method] as Json | undefined
    if (!op) continue
    const security = (op.security ?? []) as Record<string, string[]>[]
    const names = new Set(security.flatMap((s) => Object.keys(s)))
    const auth = names.has('downloadToken')
      ? 'downloadToken'
      : names.has('ownerToken')
        ? 'ownerToken'
        : names.has('apiKey')
          ? 'apiKey'
          : 'none'
    const params = [
      ...((item.parameters ?? []) as unknown[]),
      ...((op.parameters ?? []) as unknown[]),
    ]
    const idempotent = params
      .map(deref)
      .some((p) => String(p.name).toLowerCase() === 'idempotency-key' && p.required === true)
    const content = (deref(op.requestBody).content ?? {}) as Json
    operations.push({
      operationId: String(op.operationId),
      method: method.toUpperCase(),
      template,
      auth,
      scopes: security.map((s) => s.apiKey ?? []).filter((s) => s.length > 0),
      scopeNamed: op['x-assumed-scope'] === undefined,
      assumed: op['x-assumed'] === true,
      rateClass: op['x-rate-class'] as DocumentedOperation['rateClass'],
      idempotent,
      body: op.requestBody ? ('multipart/form-data' in content ? 'multipart' : 'json') : undefined,
    })
  }
}

/** Every operation of spec/openapi.yaml. */
export const documentedOperations = (): readonly DocumentedOperation[] => operations

/** The /v1 operations called with a bearer API key. */
export const v1Operations = (): readonly DocumentedOperation[] =>
  operations.filter((o) => o.template.startsWith('/v1/') && o.auth === 'apiKey')

/** A concrete path: each {name} from `ids`, or a fresh random UUID. */
export function samplePath(template: string, ids: Record<string, string> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? randomUUID())
}

/** The delegated-access header and query names the spec assumes (x-delegated-access). */
export function delegatedAccessNames(): { headers: string[]; query: string[] } {
  const names = doc['x-delegated-access'] ?? {}
  return { headers: names.headers ?? [], query: names.query ?? [] }
}
