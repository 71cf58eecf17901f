/**
 * Webhook network rules (Webhook notifications 10; WHM-003, WHN-024, WHN-026): HTTPS only, no login details,
 * and every address must be public. Which addresses and names are public is decided in one place,
 * mock/domain/addresses.ts, shared with the URL result rule (OUTPUT_URL_INVALID); this module applies it to an
 * endpoint address at registration, and sender.ts applies it again to every resolved address at each attempt.
 * --allow-insecure-webhooks lifts the scheme and address rules (http:// and loopback for local rehearsal).
 */
import { bareHost, hostProblem } from '../domain/addresses.js'

// The webhook side's names for the shared rules (routes/webhooks.ts and sender.ts import them from here).
export { bareHost, isPublicAddress, refusedHostName } from '../domain/addresses.js'

export type UrlCheck = { ok: true; url: URL } | { ok: false; problem: string }

/**
 * The registration-time check of an endpoint address (the same rules apply again to every resolved address at
 * each attempt): an absolute https URL (http too when insecure), no login details, and unless insecure, no
 * refused name and no non-public IP literal.
 */
export function checkEndpointUrl(text: string, allowInsecure: boolean): UrlCheck {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { ok: false, problem: 'not an absolute URL' }
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) {
    return { ok: false, problem: allowInsecure ? 'not an HTTP(S) address' : 'not an HTTPS address' }
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, problem: 'the address carries login details' }
  }
  const host = bareHost(url)
  if (host === '') return { ok: false, problem: 'no host' }
  if (allowInsecure) return { ok: true, url }
  const problem = hostProblem(host)
  return problem ? { ok: false, problem } : { ok: true, url }
}
