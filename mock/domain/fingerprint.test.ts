/**
 * Properties of the canonical JSON and the request fingerprint behind idempotent replays (Retry rules 3,
 * Limits > Retention): the same request, however its JSON is re-serialized, fingerprints the same; any change
 * of operation, path, a body value or an uploaded file's name, type or bytes fingerprints differently.
 */
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson, requestFingerprint } from './idempotency.js'
import { IDEMPOTENCY_RETENTION_MS, receiptHolds } from './retention.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

const HOUR = 3_600_000

/** A small deterministic generator, so a shuffle is reproducible from the seed fast-check gives. */
function lcg(seed: number) {
  let s = seed >>> 0
  return () => (s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0)
}

/** The same JSON value with the keys of every object inserted in a shuffled order (own properties only). */
function reorder(v: unknown, next: () => number): unknown {
  if (Array.isArray(v)) return v.map((x) => reorder(x, next))
  if (v && typeof v === 'object') {
    const entries = Object.entries(v).map(([k, x]) => [k, reorder(x, next)] as const)
    for (let i = entries.length - 1; i > 0; i--) {
      const j = next() % (i + 1)
      ;[entries[i], entries[j]] = [entries[j]!, entries[i]!]
    }
    return Object.fromEntries(entries) // defines own properties, also for a key named __proto__
  }
  return v
}

type Path = (string | number)[]

/** Every leaf (scalar or empty container) of a JSON value, by path. */
function leaves(v: unknown, at: Path = []): Path[] {
  const kids: [string | number, unknown][] = Array.isArray(v)
    ? v.map((x, i) => [i, x])
    : v && typeof v === 'object'
      ? Object.entries(v)
      : []
  return kids.length === 0 ? [at] : kids.flatMap(([k, x]) => leaves(x, [...at, k]))
}

function getAt(v: unknown, path: Path): unknown {
  return path.reduce<unknown>((x, k) => (x as Record<string | number, unknown>)[k], v)
}

function setAt(v: unknown, path: Path, leaf: unknown): unknown {
  if (path.length === 0) return leaf
  const [k, ...rest] = path
  if (Array.isArray(v)) return v.map((x, i) => (i === k ? setAt(x, rest, leaf) : x))
  return Object.fromEntries(
    Object.entries(v as object).map(([key, x]) => [key, key === k ? setAt(x, rest, leaf) : x]),
  )
}

/** JSON meaning: what a server sees after the client serializes the value (-0 becomes 0). */
const asSent = (v: unknown): unknown => JSON.parse(JSON.stringify(v))

const body = fc.jsonValue({ maxDepth: 4 })
const op = fc.constantFrom('createSession', 'createTurn', 'createRun', 'uploadFile')
const path = fc.constantFrom('/v1/files', '/v1/workflows/w/runs', '/v1/workflows/w', '/v1/x')

describe('canonical JSON and request fingerprints', () => {
  it('[IDEM-001][IDEM-005] canonical JSON is JSON of the same value and does not depend on key order', () => {
    fc.assert(
      fc.property(body, fc.integer(), (v, seed) => {
        const c = canonicalJson(v)
        expect(JSON.parse(c)).toEqual(asSent(v))
        expect(canonicalJson(reorder(v, lcg(seed)))).toBe(c)
        expect(canonicalJson(JSON.parse(JSON.stringify(v)))).toBe(c)
        expect(canonicalJson(JSON.parse(c))).toBe(c)
      }),
      params,
    )
  })

  it('[IDEM-001][IDEM-005] the same operation, path and body fingerprint the same, whatever the key order', () => {
    fc.assert(
      fc.property(op, path, body, fc.integer(), (o, p, v, seed) => {
        const fp = requestFingerprint({ operationId: o, path: p, body: v })
        expect(fp).toMatch(/^[0-9a-f]{64}$/)
        expect(requestFingerprint({ operationId: o, path: p, body: reorder(v, lcg(seed)) })).toBe(
          fp,
        )
        expect(requestFingerprint({ operationId: o, path: p, body: asSent(v) })).toBe(fp)
      }),
      params,
    )
  })

  it('[IDEM-002][IDEM-007] changing any one value of the body changes the fingerprint', () => {
    fc.assert(
      fc.property(
        op,
        path,
        body,
        fc.nat(),
        fc.jsonValue({ maxDepth: 2 }),
        (o, p, v0, pick, leaf0) => {
          const v = asSent(v0)
          const leaf = asSent(leaf0)
          const all = leaves(v)
          const at = all[pick % all.length]!
          fc.pre(JSON.stringify(getAt(v, at)) !== JSON.stringify(leaf))
          const changed = setAt(v, at, leaf)
          expect(requestFingerprint({ operationId: o, path: p, body: changed })).not.toBe(
            requestFingerprint({ operationId: o, path: p, body: v }),
          )
        },
      ),
      params,
    )
  })

  it('[IDEM-002][IDEM-007] adding or removing a key changes the fingerprint', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
        fc.string(),
        fc.jsonValue({ maxDepth: 1 }),
        (obj0, key, value) => {
          const obj = asSent(obj0) as Record<string, unknown>
          fc.pre(!Object.prototype.hasOwnProperty.call(obj, key))
          const bigger = Object.fromEntries([...Object.entries(obj), [key, asSent(value)]])
          const fp = (b: unknown) =>
            requestFingerprint({ operationId: 'createRun', path: '/v1/workflows/w/runs', body: b })
          expect(fp(bigger)).not.toBe(fp(obj))
        },
      ),
      params,
    )
  })

  it('[IDEM-002][IDEM-007] different operations, paths or bodies never share a fingerprint', () => {
    const request = fc.record({
      operationId: op,
      path,
      body: fc.oneof(fc.constant(null), fc.constantFrom(0, 1, 'a', 'op', '/v1/x'), body),
    })
    fc.assert(
      fc.property(request, request, (a0, b0) => {
        const a = { ...a0, body: asSent(a0.body) }
        const b = { ...b0, body: asSent(b0.body) }
        const same =
          a.operationId === b.operationId && a.path === b.path && isDeepStrictEqual(a.body, b.body)
        expect(requestFingerprint(a) === requestFingerprint(b)).toBe(same)
      }),
      params,
    )
  })

  it('[IDEM-003][IDEM-004] the same upload fingerprints the same; another name, type or any byte changed does not', () => {
    const upload = fc.record({
      filename: fc.string({ minLength: 1, maxLength: 20 }),
      mimeType: fc.constantFrom<string>('text/plain', 'application/pdf', 'image/png'),
      bytes: fc.uint8Array({ maxLength: 64 }),
    })
    fc.assert(
      fc.property(
        upload,
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.string({ minLength: 1, maxLength: 3 }),
        (u, pick, delta, suffix) => {
          const fp = (x: typeof u) =>
            requestFingerprint({ operationId: 'uploadFile', path: '/v1/files', upload: x })
          const base = fp(u)
          expect(fp({ ...u, bytes: Uint8Array.from(u.bytes) })).toBe(base)
          expect(fp({ ...u, filename: u.filename + suffix })).not.toBe(base)
          expect(fp({ ...u, mimeType: `${u.mimeType}x` })).not.toBe(base)
          expect(fp({ ...u, bytes: Uint8Array.from([...u.bytes, 0]) })).not.toBe(base)
          if (u.bytes.length > 0) {
            const flipped = Uint8Array.from(u.bytes)
            const i = pick % flipped.length
            flipped[i] = (flipped[i]! + delta) % 256
            expect(fp({ ...u, bytes: flipped })).not.toBe(base)
          }
          // An upload never matches a JSON request, even one whose body spells out the same fields.
          expect(
            requestFingerprint({
              operationId: 'uploadFile',
              path: '/v1/files',
              body: { filename: u.filename, mime: u.mimeType },
            }),
          ).not.toBe(base)
        },
      ),
      params,
    )
  })

  it('[RET-001][RET-002] a receipt holds for at least 24 hours after acceptance, and after that exactly while its execution is open', () => {
    expect(IDEMPOTENCY_RETENTION_MS).toBeGreaterThanOrEqual(24 * HOUR)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 0, max: 72 * HOUR }),
        fc.boolean(),
        (acceptedAt, after, open) => {
          const expiresAt = acceptedAt + IDEMPOTENCY_RETENTION_MS
          const now = acceptedAt + after
          const holds = receiptHolds(expiresAt, now, open)
          if (after < 24 * HOUR || open) expect(holds).toBe(true)
          expect(holds).toBe(now < expiresAt || open)
        },
      ),
      params,
    )
  })
})
