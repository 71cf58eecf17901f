/**
 * The operations of spec/openapi.yaml, matched from a method and a concrete path, with compiled validators
 * for their response bodies. The checks use it to judge every response against the document, in one of two
 * views (support/document-view.ts): the full view (the mock's own choices included) for the mock, in this
 * process or over HTTP, and the document-only view for a real deployment. Every validator function takes the
 * view explicitly; left out, it is the view of the environment's target (envView).
 */
import { escapePointer, loadOpenApi, openApiSchemas, type SpecAjv } from '../../spec/index.js'
import type { ValidateFunction } from 'ajv'
import { documentViewSchemas, viewFor, type ContractView } from './document-view.js'
import { targetKindFromEnv } from './strictness.js'
import type { Target } from './target.js'

export type { ContractView } from './document-view.js'
export { viewFor } from './document-view.js'

export type Operation = {
  operationId: string
  method: string
  template: string
  pointer: string
  responses: Record<string, unknown>
  assumed: boolean
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch']
const doc = loadOpenApi()
/** The full view's schemas (the process's shared SpecAjv of spec/openapi.yaml). */
export const specAjv = openApiSchemas()

/**
 * The kind of target the environment names, as startTarget (support/target.ts) reads it: targetKindFromEnv
 * (support/strictness.ts), except that CONFORMANCE_REHEARSAL=real (the mock in this process dressed as a real
 * deployment: the benign variants' and the real-mode mutants' runs) is a real target, as startTarget serves it.
 * The response checks use it when their context names no kind.
 */
export const envTargetKind = (env: NodeJS.ProcessEnv = process.env): Target['kind'] =>
  env.CONFORMANCE_REHEARSAL === 'real' ? 'real' : targetKindFromEnv(env)

/** The view the environment's target is judged by (envTargetKind). */
export const envView = (env: NodeJS.ProcessEnv = process.env): ContractView =>
  viewFor(envTargetKind(env))

/** The compiled schemas of a view. */
export const schemasOf = (view: ContractView): SpecAjv =>
  view === 'full' ? specAjv : documentViewSchemas()

const acceptAll = new Map<ContractView, ValidateFunction>()

/**
 * A validator for the schema at a pointer of the document, in a view. A pointer inside a schema the view
 * relaxed to `{}` (an x-assumed shape) names no schema of that view: any value is valid there.
 */
export function validatorAt(pointer: string, view: ContractView = envView()): ValidateFunction {
  const schemas = schemasOf(view)
  if (view === 'full' || resolveIn(schemas.doc, pointer) !== undefined) return schemas.at(pointer)
  let any = acceptAll.get(view)
  if (!any) acceptAll.set(view, (any = schemas.ajv.compile({})))
  return any
}

const operations: (Operation & { pattern: RegExp; literal: number })[] = []
for (const [template, item] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const op = item[method] as Record<string, unknown> | undefined
    if (!op) continue
    const literal = template.replace(/\{[^}]+\}/g, '').length
    const source = template
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+')
    operations.push({
      operationId: String(op.operationId),
      method: method.toUpperCase(),
      template,
      pointer: `#/paths/${escapePointer(template)}/${method}`,
      responses: (op.responses ?? {}) as Record<string, unknown>,
      assumed: op['x-assumed'] === true,
      pattern: new RegExp(`^${source}$`),
      literal,
    })
  }
}
// Most literal template first, so /v1/sessions/{id}/files beats /v1/sessions/{id}/{x} style overlaps.
operations.sort((a, b) => b.literal - a.literal)

/** The documented operation for a method and a concrete path (query string ignored), if any. */
export function findOperation(method: string, path: string): Operation | undefined {
  const bare = path.split('?')[0]!
  return operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(bare))
}

/** Every documented operation. */
export const allOperations = (): readonly Operation[] => operations

/** The response object documented for a status (exact status, then `4XX` style, then default). */
export function documentedResponse(
  op: Operation,
  status: number,
): { key: string; pointer: string } | undefined {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    if (key in op.responses) return { key, pointer: `${op.pointer}/responses/${key}` }
  }
  return undefined
}

/**
 * The response a status is judged by in a view: the documented one (documentedResponse); in the document view
 * also, for a 2xx the operation does not list, its one success response whose status is marked `x-assumed` (the
 * document gives the operation no success status: the mock chose one, a real target may answer another 2xx
 * with the same answer). `assumedStatus` says that the second way found it.
 */
export function responseInView(
  op: Operation,
  status: number,
  view: ContractView = envView(),
): { key: string; pointer: string; assumedStatus?: true } | undefined {
  const documented = documentedResponse(op, status)
  if (documented || view === 'full' || status < 200 || status > 299) return documented
  const assumed = Object.keys(op.responses).filter((key) => {
    const pointer = `${op.pointer}/responses/${key}`
    const res = resolve(responsePointer(pointer)) as Record<string, unknown> | undefined
    return /^2\d\d$/.test(key) && res?.['x-assumed'] === true
  })
  if (assumed.length !== 1) return undefined
  return {
    key: assumed[0]!,
    pointer: `${op.pointer}/responses/${assumed[0]!}`,
    assumedStatus: true,
  }
}

/** Follows a response `$ref` to the pointer of the response object itself. */
export function responsePointer(pointer: string): string {
  const node = resolve(pointer) as { $ref?: string } | undefined
  return node?.$ref ?? pointer
}

/** The pointer of a response's body schema for a media type, if one is documented. */
export function bodySchemaPointer(responsePtr: string, mediaType: string): string | undefined {
  const target = responsePointer(responsePtr)
  const res = resolve(target) as { content?: Record<string, { schema?: unknown }> } | undefined
  if (!res?.content?.[mediaType]?.schema) return undefined
  return `${target}/content/${escapePointer(mediaType)}/schema`
}

/** The validator of a response's body schema for a media type in a view, if one is documented. */
export function bodyValidator(
  responsePtr: string,
  mediaType: string,
  view: ContractView = envView(),
): ValidateFunction | undefined {
  const pointer = bodySchemaPointer(responsePtr, mediaType)
  return pointer === undefined ? undefined : validatorAt(pointer, view)
}

/** Headers documented on a response (after following its `$ref`). */
export function documentedHeaders(responsePtr: string): string[] {
  const res = resolve(responsePointer(responsePtr)) as
    { headers?: Record<string, unknown> } | undefined
  return Object.keys(res?.headers ?? {})
}

/** The node of the document at a JSON pointer (`#/components/schemas/Run`), if any. */
export const resolvePointer = (pointer: string): unknown => resolve(pointer)

function resolve(pointer: string): unknown {
  return resolveIn(doc, pointer)
}

function resolveIn(root: unknown, pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (acc, key) =>
        acc && typeof acc === 'object' ? (acc as Record<string, unknown>)[key] : undefined,
      root,
    )
}
