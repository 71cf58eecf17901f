/**
 * A mock over HTTP started with any flags runs every test: what a test file needs of it (call-rate limits off,
 * loopback webhook receivers) is switched through the control API after every reset (support/target.ts), and
 * no skip reason of the suite asks the user to restart the mock with other flags.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer, startTarget, type Target } from '../support/target.js'

const SUITE = fileURLToPath(new URL('../', import.meta.url))

/** How many reads of /v1/deployments pass before the first 429 (undefined: none of `n`). */
async function readsBeforeLimit(target: Target, n: number): Promise<number | undefined> {
  for (let i = 0; i < n; i++) {
    const res = await target.api.get('/v1/deployments', {
      key: target.world.keys.full,
      check: false,
    })
    if (res.status === 429) return i
  }
  return undefined
}

const registerLoopback = (target: Target) =>
  target.api.post(
    `/api/runtime/projects/${target.world.projectId}/webhooks`,
    { url: 'http://127.0.0.1:9/hook' },
    { key: target.world.ownerToken!, check: false },
  )

describe.skipIf(process.env.CONFORMANCE_CLI === '1')('a mock over HTTP', () => {
  const started: { url: string; close(): Promise<void> }[] = []
  const targets: Target[] = []
  const saved = process.env.TARGET_URL
  beforeAll(() => {
    for (const name of ['TARGET_WORLD', 'TARGET_WORLD_JSON', 'TARGET_API_KEY'])
      expect(process.env[name], `${name} must not be set for this test`).toBeUndefined()
  })
  afterEach(async () => {
    for (const t of targets.splice(0)) await t.close()
    for (const m of started.splice(0)) await m.close()
  })
  afterAll(() => {
    if (saved === undefined) delete process.env.TARGET_URL
    else process.env.TARGET_URL = saved
  })
  const connect = async (
    flags: Parameters<typeof startMockServer>[0],
    options: Parameters<typeof startTarget>[0],
  ) => {
    const mock = await startMockServer(flags)
    started.push(mock)
    process.env.TARGET_URL = mock.url
    const target = await startTarget(options)
    targets.push(target)
    return target
  }

  it('[RATE-002] started with its default flags: a file that needs call rates off gets them off, after every reset too', async () => {
    const target = await connect({ clock: 'manual' }, { rateLimits: false })
    expect(target.kind).toBe('mock-http')
    expect(await readsBeforeLimit(target, 70)).toBeUndefined()
    await target.fresh()
    expect(await readsBeforeLimit(target, 70)).toBeUndefined()
  })

  it('[RATE-002] started with --no-rate-limits: a file that tests the call rates gets them on', async () => {
    const target = await connect({ clock: 'manual', rateLimits: false }, {})
    expect(await readsBeforeLimit(target, 61)).toBe(60)
    await target.fresh()
    expect(await readsBeforeLimit(target, 61)).toBe(60)
  })

  it('[WHM-003] loopback receivers allowed exactly for the files that ask, whatever the start flag', async () => {
    const asking = await connect(
      { clock: 'manual', rateLimits: false },
      { allowInsecureWebhooks: true },
    )
    expect(asking.capabilities.insecureWebhooks).toBe(true)
    expect((await registerLoopback(asking)).status).toBe(201)
    await asking.close()
    targets.splice(0)
    const notAsking = await connect(
      { clock: 'manual', rateLimits: false, allowInsecureWebhooks: true },
      {},
    )
    expect(notAsking.capabilities.insecureWebhooks).toBe(false)
    expect((await registerLoopback(notAsking)).status).toBe(422)
  })
})

it('no skip reason of the suite asks for other start flags of the mock', () => {
  const asking: string[] = []
  for (const file of readdirSync(SUITE, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('over-http.test.ts')) continue
    const text = readFileSync(join(SUITE, file), 'utf8')
    // A skip reason is the string given to ctx.skip / skipCurrentTest (possibly on the next line).
    for (const m of text.matchAll(
      /(?:\.skip|skipCurrentTest)\(\s*(?:ctx\s*,\s*)?(['"`])([^'"`]*)\1/g,
    )) {
      if (/--no-rate-limits|--allow-insecure-webhooks|start it with|restart/i.test(m[2]!))
        asking.push(`conformance/${file}: ${m[2]}`)
    }
  }
  expect(asking).toEqual([])
})
