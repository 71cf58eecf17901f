/**
 * Start-up (issue #13, point 5: the mock answers its first request within 2x a bare Hono app). No requirement
 * of the document covers it; this guards what start-up must not do again: make an ajv instance or compile a
 * JSON Schema before a request needs one. Loading the modules, createMock and a first /_mock/health answer
 * make none; the fixture world's validator is the one exception, and only when run from source (the build
 * precompiles it, mock/fixtures/world-validator.ts). Timings are not asserted (they depend on the machine).
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterEach, expect, it, vi } from 'vitest'

type Instance = { opts: Record<string, unknown> }

/** The fixture world's instance (mock/util/ajv.ts FIXTURE_WORLD_OPTIONS): made at start from source only. */
const isFixtureWorld = (ajv: Instance) => ajv.opts.allowUnionTypes === true

afterEach(() => {
  vi.restoreAllMocks()
})

it('start-up makes no ajv instance and compiles no schema until a request needs one', async () => {
  // Every Ajv2020 construction runs _addVocabularies once; every compile goes through compile().
  const made = vi.spyOn(Ajv2020.prototype as never, '_addVocabularies')
  const compiled = vi.spyOn(Ajv2020.prototype, 'compile')
  // The instances (by their options) made or compiled with, but the fixture world's.
  const others = (spy: { mock: { contexts: unknown[] } }) =>
    (spy.mock.contexts as Instance[])
      .filter((ajv) => !isFixtureWorld(ajv))
      .map(({ opts }) => `strict ${opts.strict}, coerceTypes ${opts.coerceTypes}`)

  // Imported here, after the spies: module load is part of start-up.
  const { createMock } = await import('./index.js')
  const mock = await createMock({ clock: 'manual' })
  try {
    const health = await mock.fetch(new Request('http://mock/_mock/health'))
    expect(health.status).toBe(200)
    expect(others(made)).toEqual([])
    expect(others(compiled)).toEqual([])

    // The spies do see the instances a request makes: a checked header and a validated query string.
    const listed = await mock.fetch(
      new Request('http://mock/v1/deployments?limit=5', {
        headers: { Authorization: 'Bearer sk_test_a_full', 'X-Correlation-Id': 'startup-test' },
      }),
    )
    expect(listed.status).toBe(200)
    expect(others(made).length).toBeGreaterThan(0)
    expect(others(compiled).length).toBeGreaterThan(0)
  } finally {
    mock.close()
  }
})
