/**
 * Waiting for an execution to end, on any target: a mock moves virtual time; a real target is polled at the
 * document's recommended interval (Limits: 2 to 5 seconds; the suite polls every 3) until the execution is
 * terminal or stops at REQUIRES_ACTION (a stop point for polling), within a bound, never forever.
 */
import { expect } from 'vitest'
import type { Target } from './target.js'

export const POLL_INTERVAL_MS = 3000
export const POLL_LIMIT_MS = 10 * 60_000
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set([
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
])

/**
 * Reads `statusUrl` (a Turn or Run) until it has ended; resolves with its status. On a mock the clock moves
 * `mockAdvanceS` seconds first (enough for the script the test queued).
 */
export async function waitUntilEnded(
  target: Target,
  statusUrl: string,
  opts: { mockAdvanceS?: number; key?: string } = {},
): Promise<string> {
  const read = async (): Promise<string> => {
    const res = await target.api.get(statusUrl, { key: opts.key ?? target.world.keys.full })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    const body = res.body as { status?: string; run?: { status: string } }
    return body.run?.status ?? body.status!
  }
  if (target.control) {
    await target.control.advance(opts.mockAdvanceS ?? 10)
    return read()
  }
  const until = Date.now() + POLL_LIMIT_MS
  for (;;) {
    const status = await read()
    if (TERMINAL_STATUSES.has(status) || status === 'REQUIRES_ACTION') return status
    if (Date.now() > until)
      throw new Error(
        `${statusUrl} did not end within ${POLL_LIMIT_MS / 60_000} minutes of polling`,
      )
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
  }
}
