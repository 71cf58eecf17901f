/**
 * Run-time skips with a reason, so a file runs unchanged against the in-process mock, a mock over HTTP and a
 * real deployment: mock-only rules (virtual time, fixture control, fresh counters), rules of x-assumed choices
 * (formats and names the document does not show), and roles a real target's world file does not provide.
 */
import type { TestContext } from 'vitest'
import type { MockControl } from './control.js'
import type { Target } from './target.js'

/** The control API, or a skip on a real deployment: the test needs virtual time or fixture control. */
export function mockOnly(ctx: TestContext, target: Target, why: string): MockControl {
  if (!target.control) ctx.skip(`mock only: ${why}`)
  return target.control
}

/** A test of an x-assumed rule (the document does not show it; the spec assumes it) runs only on a mock. */
export function assumedRule(ctx: TestContext, target: Target, what: string): void {
  if (!target.control) ctx.skip(`x-assumed, mock only: ${what}`)
}

/** A world role (key, Deployment, Workflow), or a skip when the target does not provide it. */
export function role<T>(ctx: TestContext, value: T | undefined, name: string): T {
  if (value === undefined) ctx.skip(`the target's world has no ${name}`)
  return value
}

/**
 * The test's webhook receiver listens on 127.0.0.1: a mock delivers there (the file asked for loopback
 * receivers: useTarget({ allowInsecureWebhooks: true })); a real target delivers only to public HTTPS
 * addresses (Webhook notifications, rule 10), so the test is skipped there.
 */
export function loopbackReceiver(ctx: TestContext, target: Target): void {
  if (!target.capabilities.insecureWebhooks)
    ctx.skip(
      'the target does not deliver to the receiver on 127.0.0.1 (a real target sends only to public HTTPS addresses)',
    )
}
