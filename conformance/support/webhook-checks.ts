/**
 * The document's rules for one webhook request (Webhook notifications), as pure checks over what a receiver
 * got: the Service-Signature header (rule 2), the HMAC-SHA256 with the full secret over `t.` and the raw
 * request bytes exactly as received (rule 3), the 300-second window against the receiver's clock (rule 4), a
 * JSON body of at most 4,096 bytes (rule 1) with the fields of the notification table and no raw input, result,
 * file or download address, and what a retry keeps (the event_id and the bytes) and renews (the timestamp and
 * the signature). Each check returns the problems it found, in words, so a test can print every one of them;
 * an empty list is a pass. Written from the document with node:crypto: no code shared with the mock or its
 * receiver kit. Used by conformance/tests/webhooks/real-deliveries.test.ts (unit test:
 * conformance/cli/webhook-checks.test.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** Rule 2: `t=<unix seconds, 1 to 12 digits>,v1=<64 lowercase hex characters>`. */
export const SIGNATURE_HEADER = /^t=([0-9]{1,12}),v1=([0-9a-f]{64})$/
/** Rule 4: the largest accepted |t - now|, in seconds. */
export const SIGNATURE_WINDOW_S = 300
/** Rule 1 (and Sizes and counts: webhook body 4 KiB). */
export const MAX_BODY_BYTES = 4096

/** The fields of the document's notification table. */
export const NOTIFICATION_FIELDS: readonly string[] = [
  'event_id',
  'type',
  'aggregate_kind',
  'sequence',
  'occurred_at',
  'session_id',
  'turn_id',
  'run_id',
  'step_id',
  'action_id',
  'status_url',
  'outputs_url',
  'status',
]

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** An RFC 3339 timestamp (with a zone). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/
/** An absolute address (scheme://) anywhere in the body: a notification carries no file or download address. */
const ABSOLUTE_ADDRESS = /[a-z][a-z0-9+.-]*:\/\//i

export type ParsedSignature = { t: number; tText: string; v1: string }

/** Rule 2: the header's t and v1, or the problem with it. */
export function parseSignatureHeader(
  header: string | readonly string[] | undefined,
): { ok: true; signature: ParsedSignature } | { ok: false; problem: string } {
  if (header === undefined) return { ok: false, problem: 'no Service-Signature header' }
  if (typeof header !== 'string')
    return { ok: false, problem: `${header.length} Service-Signature headers, not one` }
  const m = SIGNATURE_HEADER.exec(header)
  if (!m)
    return {
      ok: false,
      problem: `Service-Signature "${header}" is not t=<unix seconds, 1 to 12 digits>,v1=<64 lowercase hex>`,
    }
  return { ok: true, signature: { t: Number(m[1]), tText: m[1]!, v1: m[2]! } }
}

/** Rule 3: hex HMAC-SHA256 keyed with the full secret string over `<t>.` then the raw bytes. */
export function documentSignature(secret: string, tText: string, raw: Uint8Array): string {
  return createHmac('sha256', secret).update(`${tText}.`, 'ascii').update(raw).digest('hex')
}

/** Rule 3: whether v1 is the signature with one of the secrets (rule 5: both during a rotation), in constant time. */
export function signatureMatches(
  signature: ParsedSignature,
  raw: Uint8Array,
  secrets: readonly string[],
): boolean {
  const given = Buffer.from(signature.v1, 'hex')
  let ok = false
  for (const secret of secrets) {
    const expected = Buffer.from(documentSignature(secret, signature.tText, raw), 'hex')
    if (expected.length === given.length && timingSafeEqual(expected, given)) ok = true
  }
  return ok
}

/** Rule 4: |t - now| at most 300 seconds (nowS: the receiver's clock when the request arrived). */
export function windowProblem(t: number, nowS: number): string | undefined {
  const off = t - nowS
  if (Math.abs(off) <= SIGNATURE_WINDOW_S) return undefined
  return `t=${t} is ${Math.abs(off)} s ${off < 0 ? 'behind' : 'ahead of'} the receiver's clock (${nowS}): over ${SIGNATURE_WINDOW_S} s`
}

export type DeliveryInput = {
  /** The Service-Signature header as received. */
  header: string | readonly string[] | undefined
  /** The request body exactly as received. */
  raw: Uint8Array
  /** The endpoint's secret (two during a rotation). */
  secrets: readonly string[]
  /** The receiver's clock when the request arrived, in unix seconds. */
  nowS: number
}

export type SignatureVerdict = { problems: string[]; signature?: ParsedSignature }

/** Rules 2-4 for one request: header shape, window, HMAC over the raw bytes. */
export function checkSignature(input: DeliveryInput): SignatureVerdict {
  const parsed = parseSignatureHeader(input.header)
  if (!parsed.ok) return { problems: [parsed.problem] }
  const { signature } = parsed
  const problems: string[] = []
  const late = windowProblem(signature.t, input.nowS)
  if (late) problems.push(late)
  if (!signatureMatches(signature, input.raw, input.secrets)) {
    let hint = ''
    const reserialized = reserialize(input.raw)
    if (reserialized && signatureMatches(signature, reserialized, input.secrets))
      hint = ' (it is the HMAC of the body re-serialised as JSON, not of the bytes sent)'
    problems.push(
      `v1 is not HMAC-SHA256 with the endpoint's secret over "${signature.tText}." and the raw request bytes${hint}`,
    )
  }
  return { problems, signature }
}

const reserialize = (raw: Uint8Array): Buffer | undefined => {
  try {
    const again = Buffer.from(JSON.stringify(JSON.parse(Buffer.from(raw).toString('utf8'))))
    return again.equals(Buffer.from(raw)) ? undefined : again
  } catch {
    return undefined
  }
}

export type BodyExpectations = {
  /** Strings that must not appear in the body: the execution's raw input, result text, file names. */
  forbidden?: readonly string[]
}

export type BodyVerdict = {
  problems: string[]
  /** The parsed body, when it is a JSON object. */
  body?: Record<string, unknown>
  /** Fields outside the document's notification table (the caller decides: fail or warn). */
  extraFields: string[]
}

const isRelativePath = (v: unknown): boolean =>
  typeof v === 'string' && v.startsWith('/') && !v.startsWith('//') && !ABSOLUTE_ADDRESS.test(v)

/** Rule 1 and the notification table for one body, as received. */
export function checkBody(raw: Uint8Array, expect: BodyExpectations = {}): BodyVerdict {
  const problems: string[] = []
  if (raw.byteLength > MAX_BODY_BYTES)
    problems.push(`the body is ${raw.byteLength} bytes: over ${MAX_BODY_BYTES}`)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw)
  } catch {
    return { problems: [...problems, 'the body is not UTF-8'], extraFields: [] }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { problems: [...problems, 'the body is not JSON'], extraFields: [] }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return { problems: [...problems, 'the body is not a JSON object'], extraFields: [] }
  const body = parsed as Record<string, unknown>
  const field = (name: string, ok: (v: unknown) => boolean, what: string) => {
    if (!(name in body)) problems.push(`no ${name}`)
    else if (!ok(body[name])) problems.push(`${name} ${JSON.stringify(body[name])} is not ${what}`)
  }
  const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0
  field('event_id', (v) => typeof v === 'string' && UUID.test(v), 'a uuid')
  field('type', nonEmpty, 'an event type')
  field('aggregate_kind', nonEmpty, 'a string')
  field('sequence', (v) => Number.isSafeInteger(v), 'an integer')
  field(
    'occurred_at',
    (v) => typeof v === 'string' && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)),
    'a timestamp',
  )
  field('status', nonEmpty, 'a status')
  field('status_url', isRelativePath, 'a relative path')
  field('outputs_url', isRelativePath, 'a relative path')
  const type = typeof body.type === 'string' ? body.type : ''
  if (body.aggregate_kind === 'SESSION' || type.startsWith('turn.')) {
    field('session_id', nonEmpty, 'an id')
    field('turn_id', nonEmpty, 'an id')
  }
  if (body.aggregate_kind === 'RUN' || type.startsWith('run.')) field('run_id', nonEmpty, 'an id')
  if (type.includes('.step.')) field('step_id', nonEmpty, 'an id')
  if ('action_id' in body) field('action_id', nonEmpty, 'an id')
  // No raw input, result, file or download address.
  if (ABSOLUTE_ADDRESS.test(text)) problems.push('the body holds an absolute address (scheme://)')
  if (/[?&]token=/.test(text)) problems.push('the body holds a download address (?token=)')
  for (const s of expect.forbidden ?? [])
    if (s && text.includes(s)) problems.push(`the body holds "${s}" (raw input or result)`)
  const extraFields = Object.keys(body).filter((k) => !NOTIFICATION_FIELDS.includes(k))
  return { problems, body, extraFields }
}

/** A received request: the Service-Signature header and the body as received. */
export type Received = { header: string | readonly string[] | undefined; raw: Uint8Array }

/**
 * Rules 4 and 6 and the event_id row: a retry (or replay) of a request carries the same event_id and the same
 * bytes, with a fresh timestamp and signature.
 */
export function checkRetry(first: Received, retry: Received): string[] {
  const problems: string[] = []
  const a = Buffer.from(first.raw)
  const b = Buffer.from(retry.raw)
  const id = (raw: Buffer): unknown => {
    try {
      return (JSON.parse(raw.toString('utf8')) as { event_id?: unknown }).event_id
    } catch {
      return undefined
    }
  }
  if (id(a) === undefined || id(a) !== id(b))
    problems.push(
      `the retry's event_id ${JSON.stringify(id(b))} is not the first attempt's ${JSON.stringify(id(a))}`,
    )
  if (!a.equals(b)) problems.push("the retry's body bytes differ from the first attempt's")
  const s1 = parseSignatureHeader(first.header)
  const s2 = parseSignatureHeader(retry.header)
  if (s1.ok && s2.ok) {
    if (s2.signature.t <= s1.signature.t)
      problems.push(
        `the retry's t=${s2.signature.t} is not later than the first attempt's t=${s1.signature.t} (no fresh timestamp)`,
      )
    if (s2.signature.v1 === s1.signature.v1)
      problems.push("the retry's v1 is the first attempt's (no fresh signature)")
  } else problems.push('a Service-Signature header is missing or malformed')
  return problems
}
