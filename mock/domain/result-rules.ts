/**
 * Public result rules (States and transitions; Errors > OUTPUT_*; Data handling): a produced result that holds
 * a credential pattern fails the execution with OUTPUT_CONTAINS_CREDENTIALS; a URL result must be a public
 * HTTPS address without login details, signatures or tokens (OUTPUT_URL_INVALID), public as the webhook
 * network rules judge it (mock/domain/addresses.ts; a name is not resolved). Pure functions.
 */
import { bareHost, hostProblem } from './addresses.js'

/** Credential patterns the mock recognises (not a general detector; the document names none). */
export const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
  /\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b/, // payment-provider secret keys
  /\bgh[pousr]_[0-9A-Za-z]{30,}\b/, // GitHub tokens
  /\bxox[abprs]-[0-9A-Za-z-]{10,}\b/, // Slack tokens
  /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/,
  /\beyJ[0-9A-Za-z_-]{8,}\.eyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\b/, // JWT
  /\b(?:password|passwd|secret|api[_-]?key)\s*[:=]\s*\S{6,}/i,
]

/** True when any string inside a value (text, JSON, filename, URL) matches a credential pattern. */
export function containsCredential(value: unknown): boolean {
  if (typeof value === 'string') return CREDENTIAL_PATTERNS.some((p) => p.test(value))
  if (Array.isArray(value)) return value.some(containsCredential)
  if (value && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => containsCredential(k) || containsCredential(v))
  return false
}

const TOKEN_PARAMS =
  /^(?:token|access_token|sig|signature|x-amz-signature|x-amz-credential|key|api_key|apikey|auth|password)$/i

/** OUTPUT_URL_INVALID unless the URL is public HTTPS with no login details, signatures or tokens. */
export function urlResultProblem(raw: string): 'OUTPUT_URL_INVALID' | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'OUTPUT_URL_INVALID'
  }
  if (url.protocol !== 'https:' || url.username || url.password) return 'OUTPUT_URL_INVALID'
  // The webhook network rules' classification of addresses and names (mock/domain/addresses.ts).
  if (hostProblem(bareHost(url)) !== undefined) return 'OUTPUT_URL_INVALID'
  for (const name of url.searchParams.keys())
    if (TOKEN_PARAMS.test(name)) return 'OUTPUT_URL_INVALID'
  return undefined
}

// The lookbehind starts a match only where a local part starts: without it a long run of word characters
// with no @ is scanned again from each of its positions (quadratic: seconds for a 64 KiB TEXT result).
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g
/** A phone number never starts inside a word (an id or a credential's digits are not its first digits). */
const PHONE = /(?<!\w)\+?\(?\d[\d ()-]{7,}\d/g
const CREDENTIALS_G = CREDENTIAL_PATTERNS.map(
  (p) => new RegExp(p.source, p.flags.includes('g') ? p.flags : `${p.flags}g`),
)

/**
 * Masks credential patterns and contact details in public free text (Data handling, DATA-002). Credentials go
 * first: masking a phone number or an e-mail address first could take part of a credential and leave the rest
 * of it, no longer matching any pattern, in clear ("AKIA…V68 555 123 4567").
 */
export function maskPublicText(text: string): string {
  let out = text
  for (const p of CREDENTIALS_G) out = out.replace(p, '[credential masked]')
  return out.replace(EMAIL, '[email masked]').replace(PHONE, '[phone masked]')
}
