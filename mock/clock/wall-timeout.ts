/**
 * Wall-clock timeouts for the few limits that are about a real network peer, not about virtual time: the SSE
 * slow-consumer send limit (about 10 s) is how long a client may leave its socket unread, which no virtual
 * clock advance can stand for. Everything else time-dependent is a scheduler timer.
 */

/** Calls fn after ms of wall time unless the returned cancel function runs first; never holds the process. */
export function wallTimeout(ms: number, fn: () => void): () => void {
  const handle = setTimeout(fn, ms)
  handle.unref()
  return () => clearTimeout(handle)
}
