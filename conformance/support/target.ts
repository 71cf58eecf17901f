/**
 * The system under test. The only module of the suite that imports mock/.
 *   default             the mock in this process, served on 127.0.0.1 on a free port (virtual time, control API)
 *   TARGET_URL=<url>    a mock started elsewhere (`npm start`, any flags), world from its control API; what a
 *                       test file needs of it (call-rate limits off, loopback webhook receivers) is switched
 *                       through POST /_mock/settings after every reset, as an in-process mock gets it from
 *                       createMock's options; or a real
 *                       deployment when the world is given: TARGET_WORLD_JSON (the conformance CLI sets it from
 *                       its flags), TARGET_WORLD=<file>, or TARGET_API_KEY (+ TARGET_DEPLOYMENT,
 *                       TARGET_WORKFLOW, TARGET_OWNER_TOKEN) to discover it. On a real target mock-only tests are
 *                       skipped, nothing is reset, and every call goes through the run's pacer (pace.ts: call
 *                       rates, 429 resends; executions and uploads only with TARGET_ALLOW_SPEND=1).
 *   CONFORMANCE_REHEARSAL=real   the mock in this process dressed as a real deployment: no control API, no
 *                       reset between tests, call-rate limits off and unpaced, spending allowed. It shows which
 *                       checks a real target gets (what skips there, and why) without a real deployment's
 *                       minutes of pacing; the call-rate checks fail in it by design.
 */
import type { Server } from 'node:http'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createMock, type Mock, type MockOptions } from '../../mock/index.js'
import { ApiClient } from './client.js'
import { MockControl, type MockSettings } from './control.js'
import { CALL_RATES, ledgerFromEnv, RunLedger, RunPacer, skipCurrentTest } from './pace.js'
import {
  discoverWorld,
  readWorldFile,
  worldFromFixtures,
  type Getter,
  type World,
} from './world.js'

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
  const env = process.env
  const url = env.TARGET_URL
  if (url) {
    const baseUrl = url.replace(/\/$/, '')
    if (env.TARGET_WORLD_JSON || env.TARGET_WORLD || env.TARGET_API_KEY) {
      const api = new ApiClient(baseUrl, new RunPacer(ledgerFromEnv(env), { spend: true }))
      return realTarget(api, await realWorld(api), async () => {})
    }
    const api = new ApiClient(baseUrl)
    const control = new MockControl(api)
    await control.reset()
    // What the test needs of the mock is switched through the control API after every reset (a reset brings
    // back the flags the mock was started with), so a mock started with its default flags runs every test.
    const wanted = wantedSettings(options)
    const started = await control.settings()
    if (!started) return olderMockTarget(api, control, options)
    const switched = Object.entries(wanted).some(
      ([name, value]) => started[name as keyof MockSettings] !== value,
    )
    const apply = async () => {
      if (switched) await control.setSettings(wanted)
    }
    await apply()
    return mockTarget(
      'mock-http',
      api,
      control,
      wanted.allow_insecure_webhooks,
      async () => {},
      apply,
    )
  }
  if (env.CONFORMANCE_REHEARSAL === 'real') return rehearsalTarget()
  const mock = await (await mockFactory())({ clock: 'manual', ...options })
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

/**
 * createMock of the mock under test: this repository's, or, with CONFORMANCE_MOCK_ROOT, that of a copy of it
 * (the mutation self-test, conformance/mutants/, points it at deliberately broken variants).
 */
async function mockFactory(): Promise<typeof createMock> {
  const root = process.env.CONFORMANCE_MOCK_ROOT
  if (!root) return createMock
  const module = (await import(pathToFileURL(join(root, 'mock/index.ts')).href)) as {
    createMock: typeof createMock
  }
  return module.createMock
}

/** CONFORMANCE_REHEARSAL=real: an in-process mock behind the real-target interface (see the header). */
async function rehearsalTarget(): Promise<Target> {
  // On wall time from now, as a real deployment is: its timestamps (expires_at, signatures) agree with Date.
  const mock = await (
    await mockFactory()
  )({
    clock: 'realtime',
    clockStart: 'now',
    rateLimits: false,
  })
  const { server, baseUrl } = await serve(mock)
  const world = worldFromFixtures(mock.fixtures(), mock.clock.now().getTime())
  const unpaced = { accept: Number.MAX_SAFE_INTEGER, read: Number.MAX_SAFE_INTEGER }
  const ledger = new RunLedger(
    { allow: true, maxExecutions: Number.MAX_SAFE_INTEGER },
    undefined,
    unpaced,
  )
  const api = new ApiClient(baseUrl, new RunPacer(ledger, { spend: true }))
  return realTarget(api, world, async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    mock.close()
  })
}

/** A target seen as a real deployment: no control API, never reset, every call through the api's pacer. */
const realTarget = (api: ApiClient, world: World, close: () => Promise<void>): Target => ({
  kind: 'real',
  baseUrl: api.baseUrl,
  api,
  control: undefined,
  capabilities: { virtualTime: false, insecureWebhooks: false },
  world,
  fresh: async () => {},
  close,
})

/** The mock settings a test file's options ask for (the in-process mock gets them as createMock options). */
const wantedSettings = (options: TargetOptions): MockSettings => ({
  rate_limits: options.rateLimits ?? true,
  allow_insecure_webhooks: options.allowInsecureWebhooks ?? false,
})

/**
 * A mock over HTTP without GET /_mock/settings (an older mock): the options cannot be switched, so a test that
 * needs call rates off is skipped when the mock enforces them (instead of failing on 429s).
 */
async function olderMockTarget(
  api: ApiClient,
  control: MockControl,
  options: TargetOptions,
): Promise<Target> {
  const target = await mockTarget('mock-http', api, control, false, async () => {})
  if (options.rateLimits === false && (await enforcesCallRates(target))) {
    const fresh = target.fresh
    target.fresh = async () => {
      skipCurrentTest(
        'needs a mock without call-rate limits: this mock predates /_mock/settings and enforces them',
      )
      await fresh()
    }
  }
  return target
}

/** Whether a mock over HTTP answers the 61st read of a minute with 429 (then reset again). */
async function enforcesCallRates(target: Target): Promise<boolean> {
  let limited = false
  for (let i = 0; i <= CALL_RATES.read && !limited; i++) {
    const res = await target.api.get('/v1/deployments', {
      key: target.world.keys.full,
      check: false,
    })
    limited = res.status === 429
  }
  await target.fresh()
  return limited
}

/** A real target's world: given whole (CLI, world file) or discovered from the key. */
async function realWorld(api: ApiClient): Promise<World> {
  const env = process.env
  if (env.TARGET_WORLD_JSON) return JSON.parse(env.TARGET_WORLD_JSON) as World
  if (env.TARGET_WORLD) return readWorldFile(env.TARGET_WORLD)
  const get: Getter = async (path, key) => {
    const res = await api.get(path, { key, check: false })
    return { status: res.status, body: res.body }
  }
  return discoverWorld(get, {
    apiKey: env.TARGET_API_KEY!,
    deployment: env.TARGET_DEPLOYMENT || undefined,
    workflow: env.TARGET_WORKFLOW || undefined,
    ownerToken: env.TARGET_OWNER_TOKEN || undefined,
  })
}

async function mockTarget(
  kind: Target['kind'],
  api: ApiClient,
  control: MockControl,
  insecureWebhooks: boolean,
  close: () => Promise<void>,
  /** After every reset: switch the settings the test needs (a mock over HTTP). */
  afterReset: () => Promise<void> = async () => {},
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
      // A reset goes back to the mode the mock was started in: the suite moves virtual time itself.
      const { mode } = await control.reset()
      if (mode === 'realtime') await control.setMode('manual')
      await afterReset()
    },
    close,
  }
}

/**
 * A mock served over HTTP on 127.0.0.1 (a free port unless given), as `npm start` would serve it: for tests of
 * the conformance CLI, which runs the suite against a URL.
 */
export async function startMockServer(
  options: Omit<MockOptions, 'log'> & { port?: number } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const { port, ...mockOptions } = options
  const mock = await createMock(mockOptions)
  const listening = await mock.listen(port === undefined ? undefined : { port })
  return {
    url: listening.url,
    close: async () => {
      await listening.close()
      mock.close()
    },
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
