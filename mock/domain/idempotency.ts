/**
 * Idempotency rules (Endpoints; Retry rules 3; Limits > Retention): the same key and the same request replays
 * the stored receipt and status without new work; the same key with another body, file or operation is
 * IDEMPOTENCY_CONFLICT; a receipt is kept at least 24 hours and until its execution ends. Keys are scoped to
 * the Project (assumed: the document does not say whether per key or per Project).
 */
import { createHash } from 'node:crypto'

/** Receipts are kept at least this long. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000

/** JSON with object keys sorted, so re-serialized but equal bodies fingerprint the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** What makes two requests "the same": operation, path and body (or the uploaded file's name, type and bytes). */
export function requestFingerprint(parts: {
  operationId: string
  path: string
  body?: unknown
  upload?: { filename: string; mimeType: string; bytes: Uint8Array }
}): string {
  const content = parts.upload
    ? {
        filename: parts.upload.filename,
        mime: parts.upload.mimeType,
        sha256: createHash('sha256').update(parts.upload.bytes).digest('hex'),
      }
    : { body: parts.body ?? null }
  return createHash('sha256')
    .update(canonicalJson({ op: parts.operationId, path: parts.path, ...content }))
    .digest('hex')
}

/** A stored receipt still answers while within its retention or while its execution has not ended. */
export const receiptHolds = (expiresAtMs: number, nowMs: number, executionOpen: boolean): boolean =>
  nowMs < expiresAtMs || executionOpen
