/**
 * The operations of spec/openapi.yaml, matched from a method and a concrete path, with compiled validators
 * for their response bodies. The checks use it to judge every response against the document.
 */
import { escapePointer, loadOpenApi, openApiSchemas } from '../../spec/index.js'
import type { ValidateFunction } from 'ajv'

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
export const specAjv = openApiSchemas()

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

/** The validator of a response's body schema for a media type, if one is documented. */
export function bodyValidator(
  responsePtr: string,
  mediaType: string,
): ValidateFunction | undefined {
  const pointer = bodySchemaPointer(responsePtr, mediaType)
  return pointer === undefined ? undefined : specAjv.at(pointer)
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
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (acc, key) =>
        acc && typeof acc === 'object' ? (acc as Record<string, unknown>)[key] : undefined,
      doc,
    )
}
