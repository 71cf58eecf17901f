/**
 * Call-rate rules (Limits > Call rates): Accept class 10 per minute, Read class 60 per minute, counted per key,
 * per Project and per Deployment, the lowest reached first. Lower limits may be set on a key or a Deployment,
 * never higher. The window algorithm is not shown in the document; the mock uses fixed one-minute windows
 * that open at the first counted request of a scope (assumed, README "What the mock does not do").
 */

export type RateClass = 'accept' | 'read'

/** The document's limits per minute; fixtures may only lower them. */
export const DOCUMENT_RATE_LIMITS: Readonly<Record<RateClass, number>> = { accept: 10, read: 60 }

export const WINDOW_MS = 60_000

export type RateWindow = { startMs: number; count: number }

/** One counter a request is charged to: a key, a Project or a Deployment, with its limit for the class. */
export type RateScope = { id: string; limit: number }

export type RateDecision =
  | { allowed: true; windows: { id: string; window: RateWindow }[] }
  | { allowed: false; resetAtMs: number; limit: number; scope: string }

/** The effective limit of a class: the document's, lowered (never raised) by an override. */
export const effectiveLimit = (cls: RateClass, override?: number | null): number =>
  override != null && override > 0
    ? Math.min(override, DOCUMENT_RATE_LIMITS[cls])
    : DOCUMENT_RATE_LIMITS[cls]

/** The window a scope is in at `nowMs` (a new one when the last has closed). */
export const currentWindow = (w: RateWindow | undefined, nowMs: number): RateWindow =>
  w && nowMs < w.startMs + WINDOW_MS ? w : { startMs: nowMs, count: 0 }

/**
 * Charges one request to every scope, or refuses it when any scope has reached its limit. A refused request is
 * not counted. resetAtMs is the latest reset among the scopes that are full, so a retry then succeeds.
 */
export function decide(
  scopes: { scope: RateScope; window: RateWindow | undefined }[],
  nowMs: number,
): RateDecision {
  const current = scopes.map(({ scope, window }) => ({
    scope,
    window: currentWindow(window, nowMs),
  }))
  const full = current.filter(({ scope, window }) => window.count >= scope.limit)
  if (full.length > 0) {
    const worst = full.reduce((a, b) => (b.window.startMs > a.window.startMs ? b : a))
    return {
      allowed: false,
      resetAtMs: worst.window.startMs + WINDOW_MS,
      limit: worst.scope.limit,
      scope: worst.scope.id,
    }
  }
  return {
    allowed: true,
    windows: current.map(({ scope, window }) => ({
      id: scope.id,
      window: { startMs: window.startMs, count: window.count + 1 },
    })),
  }
}
