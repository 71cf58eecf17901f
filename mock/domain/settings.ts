/**
 * The instance's switchable settings (deps.settings). Their start values are the flags (--no-rate-limits,
 * --allow-insecure-webhooks, or createMock's options); `POST /_mock/settings` changes them until the next reset,
 * which brings back the start values. Every reader reads deps.settings, never config, so a conformance suite
 * over HTTP switches for one test what that test needs of the mock (call-rate limits off for a property,
 * loopback webhook receivers) instead of asking the user to restart the mock with other flags.
 */
import type { MockConfig } from '../deps.js'

export type Settings = {
  /** Call-rate limits (Accept 10, Read 60 per minute, webhook replays 10 per minute) applied. */
  rateLimits: boolean
  /** http:// and loopback webhook endpoints allowed (local rehearsal only). */
  allowInsecureWebhooks: boolean
}

/** The settings an instance starts with, and a reset brings back. */
export const startSettings = (
  config: Pick<MockConfig, 'rateLimits' | 'allowInsecureWebhooks'>,
): Settings => ({
  rateLimits: config.rateLimits,
  allowInsecureWebhooks: config.allowInsecureWebhooks,
})

/** The settings as the control API shows them (snake_case, like every control body). */
export const settingsView = (s: Settings) => ({
  rate_limits: s.rateLimits,
  allow_insecure_webhooks: s.allowInsecureWebhooks,
})
