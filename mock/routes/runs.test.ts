import { readFileSync } from 'node:fs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type FixtureWorld, type Mock } from '../index.js'
import { DEFAULT_WORLD_FILE } from '../fixtures/world.js'

const WF = 'aaaaaaaa-f000-4000-8000-000000000001'
const RESOLVE_ONLY = 'sk_test_a_resolve_only'

/** The default world plus a key holding actions:resolve but not actions:approve (ACT-023). */
function worldWithResolveOnlyKey(): FixtureWorld {
  const world = JSON.parse(readFileSync(DEFAULT_WORLD_FILE, 'utf8')) as FixtureWorld
  const a = world.projects[0]!
  const read = a.api_keys.find((k) => k.key === 'sk_test_a_read')!
  a.api_keys.push({
    ...read,
    key: RESOLVE_ONLY,
    name: 'resolve-only',
    scopes: ['runs:read', 'workflows:read', 'workflows:run', 'actions:resolve'],
  })
  return world
}

let mock: Mock
beforeEach(async () => {
  mock = await createMock({ fixtures: worldWithResolveOnlyKey() })
})
afterEach(() => mock.close())

const send = (method: string, path: string, key: string, body?: unknown, idem?: string) =>
  mock.app.request(path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(idem ? { 'idempotency-key': idem } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })

async function newRun(): Promise<string> {
  const res = await send(
    'POST',
    `/v1/workflows/${WF}/runs`,
    'sk_test_a_full',
    { published_version: 1, input: { topic: 'x' } },
    'run-1',
  )
  expect(res.status).toBe(202)
  return ((await res.json()) as { run_id: string }).run_id
}

describe('run actions (beta)', () => {
  it('[ACT-023] refuses an approval resolve without actions:approve with ACTION_NOT_RESOLVABLE_BY_CALLER', async () => {
    const runId = await newRun()
    const approval = {
      decision: 'APPROVE',
      content_hash: 'a'.repeat(64),
      actor: { subject: 'employee-4711' },
    }
    const path = `/v1/runs/${runId}/actions/3a08b4f9-2d4e-4f56-8b7c-8d9eafb0c1d7/resolve`
    const refused = await send('POST', path, RESOLVE_ONLY, approval, 'resolve-1')
    expect(refused.status).toBe(403)
    const body = (await refused.json()) as { error: { code: string } }
    expect(body.error.code).toBe('ACTION_NOT_RESOLVABLE_BY_CALLER')
    // With the explicit delegation the request passes the permission check; the beta has no action: 404.
    const full = await send('POST', path, 'sk_test_a_full', approval, 'resolve-2')
    expect(full.status).toBe(404)
  })

  it('[RUN-033] a Run keeps its frozen step count after the workflow is republished', async () => {
    const runId = await newRun()
    const publish = await mock.app.request(`/_mock/workflows/${WF}/publish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ steps: 9 }),
    })
    expect(publish.status).toBe(200)
    const res = await send('GET', `/v1/runs/${runId}`, 'sk_test_a_full')
    const { run } = (await res.json()) as { run: { progress: { total: number } } }
    expect(run.progress.total).toBe(3)
  })
})

describe('run input JSON limits', () => {
  it('[RUN-026] refuses a Run input nested 5,000 deep with 422 OUTPUT_LIMIT_EXCEEDED (no stack overflow)', async () => {
    // Written by hand: JSON.stringify itself overflows the stack on such a value. About 25 KB (< 64 KiB).
    const deep = `${'{"a":'.repeat(4999)}{}${'}'.repeat(4999)}`
    const res = await mock.app.request(`/v1/workflows/${WF}/runs`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk_test_a_full',
        'content-type': 'application/json',
        'idempotency-key': 'run-deep',
      },
      body: `{"published_version":1,"input":{"topic":"x","deep":${deep}}}`,
    })
    expect(res.status).toBe(422)
    const body = (await res.json()) as { error: { code: string; details: unknown } }
    expect(body.error.code).toBe('OUTPUT_LIMIT_EXCEEDED')
    expect(body.error.details).toEqual({ reason: 'DEPTH', max_depth: 16 })
  })
})
