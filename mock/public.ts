/**
 * The package's main entry (`import { createMock } from 'ai-employee-mock'`): a mock in the caller's process
 * behind a narrow surface: a fetch handler, listen(), the virtual clock, scenarios, reset and close. The
 * internals (the app, the store, the dependency set) stay behind mock/index.ts, which the repository's own
 * tests use.
 */
import {
  createMock as createInternalMock,
  type Mock,
  type MockOptions as InternalOptions,
} from './index.js'
import type { ClockMode } from './clock/clock.js'
import type { FixturesView } from './fixtures/load.js'
import type { FixtureScenario, FixtureWorld } from './fixtures/world.js'
import type { JournalEntry } from './util/journal.js'

export type MockOptions = Pick<
  InternalOptions,
  | 'fixtures'
  | 'db'
  | 'clock'
  | 'clockStart'
  | 'seed'
  | 'allowInsecureWebhooks'
  | 'webhookCa'
  | 'rateLimits'
  | 'durable'
  | 'controlToken'
  | 'forwardCompat'
  | 'log'
>

/** What POST /_mock/scenarios answered: the target, its kind, the scenario and how many executions it applies to. */
export type QueuedScenario = {
  target_id: string
  target: 'deployment' | 'workflow'
  scenario: string
  times: number
}

/** A control call the mock refused (unknown target or scenario, bad value): the error envelope it answered. */
export class MockControlError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const error = (body as { error?: { code?: string; message?: string } } | null)?.error
    super(`${status} ${error?.code ?? ''}${error?.message ? `: ${error.message}` : ''}`)
    this.name = 'MockControlError'
  }
}

/** An inline scenario script: steps on virtual time (README: Scenarios), optionally named to queue again. */
export type InlineScenario = FixtureScenario & { name?: string }

export type MockServer = {
  /**
   * Answers one request without a socket. A URL's host is ignored: `new Request('http://mock/v1/deployments',
   * { headers: { Authorization: 'Bearer <key>' } })`.
   */
  fetch(request: Request): Promise<Response>
  /** Serves the mock over HTTP on host:port (defaults 127.0.0.1 and a free port). */
  listen(opts?: { port?: number; host?: string }): Promise<{ url: string; close(): Promise<void> }>
  clock: {
    /** Current virtual time. */
    now(): Date
    readonly mode: ClockMode
    /** Moves virtual time forward, firing every due timer in order; resolves with the new time. */
    advance(seconds: number): Promise<Date>
    setMode(mode: ClockMode): void
  }
  scenarios: {
    /**
     * Queues a scenario for the next `times` executions of a Deployment or Workflow id (POST
     * /_mock/scenarios): a built-in or fixture scenario's name, or an inline script (a fixture scenario's
     * shape, optionally named); rejects with MockControlError for an unknown target, scenario or bad script.
     */
    queue(
      targetId: string,
      scenario: string | InlineScenario,
      times?: number,
    ): Promise<QueuedScenario>
  }
  /**
   * Fault rules (README: Fault rules): `add(body)` takes the POST /_mock/faults body (validated: a RangeError
   * names what is wrong); `list()`, `remove(id)`, `clear()`. A reset clears them.
   */
  faults: Mock['faults']
  webhooks: {
    /** Resolves once no webhook send is in flight or queued (await before reading what a receiver got). */
    idle(): Promise<void>
  }
  /**
   * The request journal (GET /_mock/requests): the requests received on /v1 and /api/runtime, oldest first
   * (at most the last 1000; no keys, tokens, query strings or bodies). Cleared by reset.
   */
  requests(): JournalEntry[]
  /** Empties the request journal (DELETE /_mock/requests). */
  clearRequests(): void
  /** The projects, keys, Deployments and Workflows of the fixture world (GET /_mock/fixtures). */
  fixtures(): FixturesView
  /** Back to the fixture world, its starting clock and mode, and the start of the id sequence. */
  reset(): Promise<Date>
  /** Stops timers, aborts webhook sends and closes the store. */
  close(): void
}

/**
 * Creates a mock in this process (clock 'manual' unless told otherwise).
 * @example
 *   const mock = await createMock()
 *   const key = mock.fixtures().projects[0]!.api_keys[0]!.key
 *   await mock.clock.advance(5)
 */
export async function createMock(options: MockOptions = {}): Promise<MockServer> {
  const mock = await createInternalMock(options)
  const control = async (path: string, body: unknown): Promise<unknown> => {
    const res = await mock.app.request(`/_mock${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(options.controlToken ? { Authorization: `Bearer ${options.controlToken}` } : {}),
      },
      body: JSON.stringify(body),
    })
    const answer: unknown = await res.json()
    if (!res.ok) throw new MockControlError(res.status, answer)
    return answer
  }
  return {
    fetch: mock.fetch,
    listen: async (opts) => {
      const { url, close } = await mock.listen(opts)
      return { url, close }
    },
    clock: mock.clock,
    scenarios: {
      queue: async (targetId, scenario, times) =>
        (await control('/scenarios', {
          target_id: targetId,
          scenario,
          ...(times === undefined ? {} : { times }),
        })) as QueuedScenario,
    },
    faults: mock.faults,
    webhooks: mock.webhooks,
    requests: () => [...mock.deps.journal.list()],
    clearRequests: () => mock.deps.journal.clear(),
    fixtures: mock.fixtures,
    reset: mock.reset,
    close: mock.close,
  }
}

export type { ClockMode, FixturesView, FixtureWorld, JournalEntry }
