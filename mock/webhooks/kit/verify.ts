/**
 * Receiver kit, signature half (Webhook notifications 2-5): checks the Service-Signature header of a
 * notification against the raw request bytes. Pure and dependency-free (node:crypto only): integrators import
 * it from the package entry without starting the mock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** The request header that carries the signature. */
export const SIGNATURE_HEADER = 'Service-Signature'

/** Rule 4: the largest allowed |now - t|, in seconds. */
export const SIGNATURE_TOLERANCE_S = 300

/**
 * Rule 5: how long to keep verifying with the previous secret after a rotation: the 20-second maximum send
 * time plus the 300-second signature window.
 */
export const ROTATION_OVERLAP_S = 20 + SIGNATURE_TOLERANCE_S

/** Rule 2, read strictly: t is 1-12 ASCII digits, v1 exactly 64 lowercase hex characters, nothing else. */
const HEADER_PATTERN = /^t=([0-9]{1,12}),v1=([0-9a-f]{64})$/

/** t as a number and as sent (the HMAC covers the ASCII digits exactly as they appear), and v1. */
export type ParsedSignature = { t: number; tText: string; v1: string }

export type VerifyFailure =
  | 'missing-header'
  | 'malformed-header'
  | 'no-secret'
  | 'timestamp-outside-window'
  | 'signature-mismatch'

export type VerifyResult = { ok: true; t: number } | { ok: false; reason: VerifyFailure }

export type VerifyInput = {
  /** The Service-Signature header value as received (undefined or null when absent). */
  header: string | null | undefined
  /** The request body exactly as received: bytes, never re-serialized JSON (rule 3). */
  rawBody: Uint8Array | string
  /** Every secret currently valid: the new one and, during a rotation, the old one (rule 5). */
  secrets: readonly string[]
  /** The receiver's current time in unix seconds. */
  nowS: number
  /** Allowed |now - t| in seconds; default 300 (rule 4). */
  toleranceS?: number
}

/** Parses a Service-Signature header strictly; undefined when it is not exactly `t=<digits>,v1=<hex>`. */
export function parseSignatureHeader(header: string): ParsedSignature | undefined {
  const m = HEADER_PATTERN.exec(header)
  if (!m) return undefined
  return { t: Number(m[1]), tText: m[1]!, v1: m[2]! }
}

/**
 * Verifies a notification: strict header, |nowS - t| <= toleranceS, and HMAC-SHA256 keyed with the full secret
 * string over `${t}.` followed by the raw body bytes, compared in constant time against each secret.
 *
 * Receiving a notification (Webhook notifications 6-8), in order:
 * 1. Verify with this function before anything else; answer 401 (or any non-2xx) when it fails.
 * 2. Deduplicate by event_id with the body hash (see Deduplicator): a duplicate gets a 2xx too, a different
 *    body under a known event_id is rejected.
 * 3. Store the notice, then return a 2xx promptly; do the work afterwards, outside the request.
 * 4. Do not trust the notice's status (order is not guaranteed): re-read the state with an authenticated
 *    request built from the ids in the notice (session_id and turn_id, or run_id) against your configured base
 *    address, without following redirects, and never follow an address carried in the notice.
 * 5. A webhook never starts work: do not create executions to recover from delivery problems.
 *
 * @example
 * const r = verifySignature({ header: req.headers['service-signature'], rawBody, secrets: [secret],
 *   nowS: Math.floor(Date.now() / 1000) })
 * if (!r.ok) return res.writeHead(401).end()
 */
export function verifySignature(input: VerifyInput): VerifyResult {
  const { header, rawBody, secrets, nowS } = input
  const toleranceS = input.toleranceS ?? SIGNATURE_TOLERANCE_S
  if (header === undefined || header === null || header === '') {
    return { ok: false, reason: 'missing-header' }
  }
  const parsed = parseSignatureHeader(header)
  if (!parsed) return { ok: false, reason: 'malformed-header' }
  const usable = secrets.filter((s) => typeof s === 'string' && s.length > 0)
  if (usable.length === 0) return { ok: false, reason: 'no-secret' }
  if (!(Math.abs(nowS - parsed.t) <= toleranceS)) {
    return { ok: false, reason: 'timestamp-outside-window' }
  }
  const given = Buffer.from(parsed.v1, 'hex')
  const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody
  let match = false
  for (const secret of usable) {
    const expected = createHmac('sha256', secret)
      .update(`${parsed.tText}.`, 'ascii')
      .update(bytes)
      .digest()
    // Every secret is tried (no early exit), so the time taken does not tell which one matched.
    if (timingSafeEqual(expected, given)) match = true
  }
  return match ? { ok: true, t: parsed.t } : { ok: false, reason: 'signature-mismatch' }
}
