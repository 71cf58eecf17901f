/**
 * Header values from the interface document's bounds. Node's HTTP client sends header strings as latin1 and
 * refuses characters outside TAB, 0x20-0x7E and 0x80-0xFF; values are trimmed of surrounding spaces by HTTP
 * parsers. So byte lengths are built from visible ASCII (one byte per character), and UTF-8 bytes are put on the
 * wire with utf8HeaderValue() (the latin1 string of those bytes).
 *
 * - Idempotency-Key: 1 to 256 BYTES (Limits > Sizes and counts); 0 and 257+ are INVALID_IDEMPOTENCY_KEY.
 * - X-Correlation-Id: the format is not shown; spec/openapi.yaml assumes ^[A-Za-z0-9._:-]{1,128}$ (x-assumed).
 * - Authorization: `Bearer <API_KEY>`; anything else is INVALID_API_KEY.
 */
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'

export const IDEMPOTENCY_KEY_BYTES = { min: 1, max: 256 } as const

/** One visible ASCII character (0x21-0x7E): one byte on the wire, never trimmed. */
export const visibleAscii = (): fc.Arbitrary<string> =>
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c))

/** The header value that puts the UTF-8 bytes of `text` on the wire (Node writes header strings as latin1). */
export const utf8HeaderValue = (text: string): string =>
  Buffer.from(text, 'utf8').toString('latin1')

/** An ASCII key of exactly `bytes` bytes, unique per call when bytes >= 8: a random prefix padded with '%'. */
export function idempotencyKeyOfBytes(bytes: number): string {
  const unique = randomUUID().replace(/-/g, '')
  return (unique.slice(0, Math.min(bytes, unique.length)) + '%'.repeat(bytes)).slice(0, bytes)
}

/** A valid Idempotency-Key: 1 to 256 visible ASCII bytes (short ones may repeat across runs). */
export const idempotencyKey = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({
      unit: visibleAscii(),
      minLength: IDEMPOTENCY_KEY_BYTES.min,
      maxLength: IDEMPOTENCY_KEY_BYTES.max,
    }),
    fc
      .constantFrom(IDEMPOTENCY_KEY_BYTES.min, IDEMPOTENCY_KEY_BYTES.max)
      .map(idempotencyKeyOfBytes),
  )

/** An Idempotency-Key outside 1 to 256 bytes: empty, or 257 bytes and more. */
export const invalidIdempotencyKey = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant(''),
    fc.constant(IDEMPOTENCY_KEY_BYTES.max + 1).map(idempotencyKeyOfBytes),
    fc.string({
      unit: visibleAscii(),
      minLength: IDEMPOTENCY_KEY_BYTES.max + 1,
      maxLength: 1024,
    }),
  )

const CORRELATION_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-']
const correlationChar = () => fc.constantFrom(...CORRELATION_CHARS)

/** A well-formed X-Correlation-Id under the assumed pattern ^[A-Za-z0-9._:-]{1,128}$. */
export const correlationId = (): fc.Arbitrary<string> =>
  fc.string({ unit: correlationChar(), minLength: 1, maxLength: 128 })

/** A malformed X-Correlation-Id under the assumed pattern: too long, or holding a character outside it. */
export const invalidCorrelationId = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: correlationChar(), minLength: 129, maxLength: 300 }),
    fc
      .tuple(
        fc.string({ unit: correlationChar(), maxLength: 20 }),
        fc.oneof(
          visibleAscii().filter((c) => !CORRELATION_CHARS.includes(c)),
          fc.constant(' '),
        ),
        fc.string({ unit: correlationChar(), minLength: 1, maxLength: 20 }),
      )
      .map(([a, bad, b]) => (bad === ' ' ? `x${a}${bad}${b}` : `${a}${bad}${b}`)),
  )

/** A token that is no API key of any target (random visible ASCII). */
const unknownToken = () => fc.string({ unit: visibleAscii(), minLength: 1, maxLength: 64 })

/**
 * An Authorization value that carries no valid API key: random text, an unknown bearer token, another scheme,
 * a bearer without token. Values containing one of `knownKeys` are left out.
 */
export const invalidAuthorization = (knownKeys: readonly string[]): fc.Arbitrary<string> =>
  fc
    .oneof(
      fc.string({ unit: visibleAscii(), maxLength: 80 }),
      unknownToken().map((t) => `Bearer ${t}`),
      unknownToken().map((t) => `Basic ${Buffer.from(`${t}:`).toString('base64')}`),
      unknownToken().map((t) => `Token ${t}`),
      fc.constantFrom('', 'Bearer', 'Bearer null', 'Bearer undefined'),
    )
    .filter((v) => !knownKeys.some((k) => v.includes(k)))
