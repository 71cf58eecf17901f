/**
 * What the inspector may show of a secret: never the whole of an API key, owner token, download token or
 * webhook secret. A secret is shown as a short prefix and "…" (enough to tell two fixture keys apart, never
 * enough to use one); a URL without its login, query or fragment; a rate-window scope with its key redacted.
 */

/** At most 10 characters of a secret and never more than a third of it, then "…". */
export function redactSecret(secret: string): string {
  const shown = Math.min(10, Math.floor(secret.length / 3))
  return `${secret.slice(0, shown)}…`
}

/** A URL's scheme, host, port and path only (a login, query or fragment may carry a secret). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return redactSecret(url)
  }
}

/** A call-rate scope (`key:<api key>:<class>`, `project:<id>:<class>`, ...) with an API key redacted. */
export function redactScope(scope: string): string {
  const [kind, ...rest] = scope.split(':')
  if (kind !== 'key' || rest.length < 2) return scope
  const cls = rest.pop()!
  return `key:${redactSecret(rest.join(':'))}:${cls}`
}
