/**
 * Wall-clock timeouts for the few limits that are about a real network peer, not about virtual time: the SSE
 * slow-consumer send limit (about 10 s) is how long a client may leave its socket unread, a webhook send's
 * 20-second limit (WHN-027) is how long a receiver may take, and a fault rule's delay is a real network delay;
 * no virtual clock advance can stand for any of them. Everything else
 * time-dependent is a scheduler timer.
 */

/** Calls fn after ms of wall time unless the returned cancel function runs first; never holds the process. */
export function wallTimeout(ms: number, fn: () => void): () => void {
  const handle = setTimeout(fn, ms)
  handle.unref()
  return () => clearTimeout(handle)
}

/**
 * Resolves after ms of wall time: a fault rule's `delay_ms` (mock/middleware/faults.ts), a real network
 * delay a client's own timeouts must see. Never holds the process.
 */
export function wallSleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0) return resolve()
    wallTimeout(ms, resolve)
  })
}
