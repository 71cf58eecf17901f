/**
 * Keeps tests that make many Accept-class calls (uploads in a property) about their own rule, not the call
 * rate (RATE-001 has its own tests): a 429 RATE_LIMITED is sent again after Retry-After, by advancing virtual
 * time on the mock or by waiting on a real target.
 */
import type { ApiResponse } from './client.js'
import type { Target } from './target.js'

export async function retryRateLimited(
  target: Target,
  send: () => Promise<ApiResponse>,
  attempts = 3,
): Promise<ApiResponse> {
  let res = await send()
  for (let i = 1; i < attempts && res.status === 429; i++) {
    const seconds = Math.max(1, Number(res.headers['retry-after'] ?? 1))
    if (target.control) await target.control.advance(seconds)
    else await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    res = await send()
  }
  return res
}
