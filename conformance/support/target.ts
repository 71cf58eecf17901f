/**
 * The system under test. The only module of the suite that imports mock/.
 *   default             the mock in this process, served on 127.0.0.1 on a free port (virtual time, control API)
 *   TARGET_URL=<url>    a mock started elsewhere (`npm start`), or with TARGET_WORLD=<file> a real deployment,
 *                       where only `real` requirements run: mock-only tests are skipped
 */
import type { Server } from 'node:http'
import { createMock, type Mock } from '../../mock/index.js'
import { ApiClient } from './client.js'
import { MockControl } from './control.js'
import { readWorldFile, worldFromFixtures, type World } from './world.js'

export type Capabilities = {
  /** The control API exists: virtual time, reset, scenarios, fixtures. */
  virtualTime: boolean
  /** Webhooks may go to http://127.0.0.1 (an in-process mock started with allowInsecureWebhooks). */
  insecureWebhooks: boolean
}

export type Target = {
  kind: 'in-process' | 'mock-http' | 'real'
  baseUrl: string
  api: ApiClient
  control: MockControl | undefined
  capabilities: Capabilities
  world: World
  /** Back to a fresh world between tests where the target allows it (mock: /_mock/reset). */
  fresh(): Promise<void>
  close(): Promise<void>
}

/** Options for an in-process mock (ignored for TARGET_URL targets, which are configured where they run). */
export type TargetOptions = {
  /** Apply call-rate limits (default true); model-based tests turn them off to keep time under their control. */
  rateLimits?: boolean
  /** Allow http:// and loopback webhook endpoints (the test's receiver listens on 127.0.0.1). */
  allowInsecureWebhooks?: boolean
}

/** Starts (or connects to) the target named by the environment. */
export async function startTarget(options: TargetOptions = {}): Promise<Target> {
  const url = process.env.TARGET_URL
  if (url) {
    const api = new ApiClient(url.replace(/\/$/, ''))
    if (process.env.TARGET_WORLD) {
      return {
        kind: 'real',
        baseUrl: api.baseUrl,
        api,
        control: undefined,
        capabilities: { virtualTime: false, insecureWebhooks: false },
        world: readWorldFile(process.env.TARGET_WORLD),
        fresh: async () => {},
        close: async () => {},
      }
    }
    const control = new MockControl(api)
    await control.reset()
    return mockTarget('mock-http', api, control, false, async () => {})
  }
  const mock = await createMock({ clock: 'manual', ...options })
  const { server, baseUrl } = await serve(mock)
  const api = new ApiClient(baseUrl)
  return mockTarget(
    'in-process',
    api,
    new MockControl(api),
    options.allowInsecureWebhooks ?? false,
    async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      mock.close()
    },
  )
}

async function mockTarget(
  kind: Target['kind'],
  api: ApiClient,
  control: MockControl,
  insecureWebhooks: boolean,
  close: () => Promise<void>,
): Promise<Target> {
  const world = worldFromFixtures(await control.fixtures(), Date.parse((await control.clock()).now))
  return {
    kind,
    baseUrl: api.baseUrl,
    api,
    control,
    capabilities: { virtualTime: true, insecureWebhooks },
    world,
    fresh: async () => {
      await control.reset()
    },
    close,
  }
}

async function serve(mock: Mock): Promise<{ server: Server; baseUrl: string }> {
  const { server, url } = await mock.listen()
  return { server, baseUrl: url }
}

/**
 * The webhook receiver kit, re-exported for the webhook tests: it is pure (no mock state) and is what
 * integrators use, so the suite checks it against real deliveries beside its own reading of the document.
 */
export { Deduplicator, verifySignature } from '../../mock/index.js'
