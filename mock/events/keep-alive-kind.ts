/**
 * The `sse.keep-alive` timer kind: one timer row per open SSE stream, due 15 s of virtual time after the
 * previous keep-alive. Kept apart from the stream module so the timer registry imports nothing heavy; the
 * stream module plugs its handler in when it loads. A row whose stream is gone (closed, or a restart with
 * --db) fires and does nothing.
 */
import type { Deps } from '../deps.js'
import type { TimerKinds } from '../clock/timer-kinds.js'

export const KEEP_ALIVE_KIND = 'sse.keep-alive'

let handler: ((deps: Deps, streamId: string) => void) | undefined

/** The stream module's keep-alive handler. */
export const setKeepAliveHandler = (fn: (deps: Deps, streamId: string) => void): void => {
  handler = fn
}

/** Registers the events feature's timer kinds. */
export function registerEventTimers(kinds: TimerKinds): void {
  kinds.register<{ stream: string }>(KEEP_ALIVE_KIND, ({ stream }, { deps }) => {
    handler?.(deps, stream)
  })
}
