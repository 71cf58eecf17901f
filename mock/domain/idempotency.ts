/**
 * Idempotency rules (Endpoints; Retry rules 3): the same key and the same request replays the stored receipt
 * and status without new work; the same key with another body, file or operation is IDEMPOTENCY_CONFLICT.
 * Keys are scoped to the Project (assumed: the document does not say whether per key or per Project). How
 * long a receipt is kept (at least 24 hours and until its execution ends) is in retention.ts.
 */
import { sha256Hex } from '../util/sha256.js'

/** A container being serialised: its children (arrays: the elements; objects: sorted entries) and results. */
type Frame = {
  node: object
  keys: string[] | null
  children: unknown[]
  /** Index of the next child; holes of a sparse array serialise as nothing, as Array#map + join do. */
  next: number
  parts: (string | undefined)[]
}

/**
 * JSON with object keys sorted, so re-serialized but equal bodies fingerprint the same. Object entries whose
 * value is undefined are left out; undefined elsewhere is null. A value nested thousands deep is fingerprinted
 * without overflowing the call stack; a cycle throws a TypeError.
 */
export function canonicalJson(value: unknown): string {
  try {
    return shallowCanonical(value, 0)
  } catch (error) {
    if (error !== TOO_DEEP) throw error
    return deepCanonical(value)
  }
}

/** Thrown by shallowCanonical past SHALLOW_DEPTH (a deep value, or a cycle): deepCanonical takes over. */
const TOO_DEEP = Symbol('too deep')
const SHALLOW_DEPTH = 64

/** canonicalJson by recursion: fast for the bodies requests carry, bounded to SHALLOW_DEPTH levels. */
function shallowCanonical(v: unknown, depth: number): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null)
  if (depth === SHALLOW_DEPTH) throw TOO_DEEP
  if (Array.isArray(v)) {
    let out = '['
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ','
      // A hole of a sparse array serialises as nothing, as Array#map + join do.
      if (i in v) out += shallowCanonical(v[i], depth + 1) ?? ''
    }
    return `${out}]`
  }
  const o = v as Record<string, unknown>
  const keys = Object.keys(o)
  // Keys sorted as Array#sort sorts strings (by UTF-16 code units); most bodies come in order already.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort()
      break
    }
  }
  let out = '{'
  for (const k of keys) {
    const x = o[k]
    if (x === undefined) continue
    if (out.length > 1) out += ','
    out += JSON.stringify(k) + ':' + shallowCanonical(x, depth + 1)
  }
  return out + '}'
}

/** canonicalJson with an explicit stack instead of recursion: any depth; a cycle throws a TypeError. */
function deepCanonical(value: unknown): string {
  const onPath = new Set<object>()
  const open = (v: object): Frame => {
    if (onPath.has(v)) throw new TypeError('canonicalJson: cyclic structure')
    onPath.add(v)
    if (Array.isArray(v)) return { node: v, keys: null, children: v, next: 0, parts: [] }
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return {
      node: v,
      keys: entries.map(([k]) => k),
      children: entries.map(([, x]) => x),
      next: 0,
      parts: [],
    }
  }
  const close = (f: Frame): string => {
    onPath.delete(f.node)
    const keys = f.keys
    if (keys === null) return `[${f.parts.join(',')}]`
    return `{${f.parts.map((p, i) => `${JSON.stringify(keys[i])}:${p}`).join(',')}}`
  }
  const scalar = (v: unknown): string | undefined => JSON.stringify(v ?? null)
  if (value === null || typeof value !== 'object') return scalar(value) as string
  const stack: Frame[] = [open(value)]
  for (;;) {
    const top = stack[stack.length - 1]!
    if (top.next < top.children.length) {
      const i = top.next++
      if (top.keys === null && !(i in top.children)) {
        top.parts.push(undefined)
        continue
      }
      const child = top.children[i]
      if (child !== null && typeof child === 'object') stack.push(open(child))
      else top.parts.push(scalar(child))
      continue
    }
    const text = close(stack.pop()!)
    const parent = stack[stack.length - 1]
    if (!parent) return text
    parent.parts.push(text)
  }
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
        sha256: sha256Hex(parts.upload.bytes),
      }
    : { body: parts.body ?? null }
  return sha256Hex(canonicalJson({ op: parts.operationId, path: parts.path, ...content }))
}
