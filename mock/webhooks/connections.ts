/**
 * The instance's kept-alive connections to webhook receivers: one HTTP and one HTTPS agent. A send reuses an
 * idle connection to the same receiver instead of opening one per attempt (connection set-up was most of the
 * wall time of a busy Project's 30 virtual days).
 *
 * What a reused connection must not change:
 * - Network rules (WHN-026): every attempt still resolves the host and checks every address (sender.ts). A
 *   connection is pooled under its origin AND the exact set of addresses that were checked when it was opened,
 *   so a reused one always goes to an address the current attempt's check accepted; a changed DNS answer opens
 *   a new connection.
 * - Certificates (WHN-024): an HTTPS connection is pooled under its TLS options (trusted CAs, server name,
 *   rejectUnauthorized, as node:https keys them); it was verified when it was opened.
 * - Exact outcomes: a receiver may close an idle kept-alive connection at the moment a send picks it. That
 *   race is not an attempt's failure; sender.ts retries such a send once on a fresh connection (see there).
 * - Limits: idle connections close after IDLE_SOCKET_MS of wall time (sooner when the receiver announces a
 *   shorter Keep-Alive timeout); a reset or close of the mock destroys them all.
 */
import { Agent as HttpAgent, type ClientRequestArgs } from 'node:http'
import { Agent as HttpsAgent, type RequestOptions as HttpsRequestOptions } from 'node:https'
import { parseTarget, type SendTarget } from './sender.js'

/** An idle kept-alive connection is closed after this long (wall time; I/O, not the virtual clock). */
export const IDLE_SOCKET_MS = 4_000

/** The request option naming the checked addresses a connection may go to (part of the pool key). */
export type PinnedRequest = { pinnedAddresses?: string }

/** Endpoint addresses parsed for sending kept at once (then the memo starts over). */
const TARGETS_KEPT = 1_000

/** The pool key of node:http, plus the checked addresses. */
class PinnedHttpAgent extends HttpAgent {
  override getName(options?: ClientRequestArgs & PinnedRequest): string {
    return `${super.getName(options)}|${options?.pinnedAddresses ?? ''}`
  }
}

/** The pool key of node:https (origin and TLS options), plus the checked addresses. */
class PinnedHttpsAgent extends HttpsAgent {
  override getName(options?: HttpsRequestOptions & PinnedRequest): string {
    return `${super.getName(options)}|${options?.pinnedAddresses ?? ''}`
  }
}

/** One per mock instance (deps.deliveries.connections). */
export class WebhookConnections {
  readonly http: HttpAgent = new PinnedHttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS })
  readonly https: HttpsAgent = new PinnedHttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS })

  /** Endpoint addresses parsed for sending, by their text (a pure function of it: kept across resets). */
  private readonly targets = new Map<string, SendTarget>()

  /** An endpoint address parsed for sending (sender.ts parseTarget), once per address text. */
  target(url: string): SendTarget {
    let t = this.targets.get(url)
    if (!t) {
      if (this.targets.size >= TARGETS_KEPT) this.targets.clear()
      t = parseTarget(url)
      this.targets.set(url, t)
    }
    return t
  }

  /** The agent for a URL's scheme. */
  agentFor(https: boolean): HttpAgent {
    return https ? this.https : this.http
  }

  /** Destroys every connection, idle or in use (reset, close); the agents stay usable. */
  destroy(): void {
    this.http.destroy()
    this.https.destroy()
  }
}
