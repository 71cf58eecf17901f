/**
 * GET and POST /_mock/settings (mock/domain/settings.ts): a test switches call-rate limits and loopback webhook
 * endpoints for a while, over HTTP as well as in process; a reset brings back the start flags.
 */
import { afterEach, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'

const KEY = 'sk_test_a_full'
const PROJECT = 'aaaaaaaa-0000-4000-8000-000000000000'
const JSON_H = { 'Content-Type': 'application/json' }

let mock: Mock
afterEach(() => mock.close())

const settings = async (patch?: Record<string, unknown>) => {
  const res = await mock.app.request('/_mock/settings', {
    method: patch ? 'POST' : 'GET',
    ...(patch ? { headers: JSON_H, body: JSON.stringify(patch) } : {}),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** How many reads of one minute pass before the first 429 (undefined: none of `n`). */
async function readsBeforeLimit(n: number): Promise<number | undefined> {
  for (let i = 0; i < n; i++) {
    const res = await mock.app.request('/v1/deployments', {
      headers: { Authorization: `Bearer ${KEY}` },
    })
    if (res.status === 429) return i
  }
  return undefined
}

const ownerToken = () => {
  const project = mock.fixtures().projects.find((p) => p.id === PROJECT)
  return project!.owner_token!
}

const register = (url: string) =>
  mock.app.request(`/api/runtime/projects/${PROJECT}/webhooks`, {
    method: 'POST',
    headers: { ...JSON_H, Authorization: `Bearer ${ownerToken()}` },
    body: JSON.stringify({ url }),
  })

it('[RATE-002] call-rate limits switched off for a while and back on by a reset', async () => {
  mock = await createMock()
  expect(await settings()).toEqual({
    status: 200,
    body: { rate_limits: true, allow_insecure_webhooks: false },
  })
  expect(await readsBeforeLimit(61)).toBe(60)
  await mock.app.request('/_mock/reset', { method: 'POST' })
  expect((await settings({ rate_limits: false })).body).toMatchObject({ rate_limits: false })
  expect(await readsBeforeLimit(70)).toBeUndefined()
  await mock.app.request('/_mock/reset', { method: 'POST' })
  expect((await settings()).body).toMatchObject({ rate_limits: true })
  expect(await readsBeforeLimit(61)).toBe(60)
})

it('[RATE-002] a mock started without call-rate limits switches them on for a test', async () => {
  mock = await createMock({ rateLimits: false })
  expect(await readsBeforeLimit(70)).toBeUndefined()
  await settings({ rate_limits: true })
  await mock.app.request('/_mock/reset', { method: 'POST' })
  expect((await settings()).body).toMatchObject({ rate_limits: false })
  await settings({ rate_limits: true })
  expect(await readsBeforeLimit(61)).toBe(60)
})

it('[WHM-003] loopback http:// endpoints allowed only while the setting is on; a reset brings back the flag', async () => {
  mock = await createMock({ rateLimits: false })
  expect((await register('http://127.0.0.1:9/hook')).status).toBe(422)
  await settings({ allow_insecure_webhooks: true })
  expect((await register('http://127.0.0.1:9/hook')).status).toBe(201)
  await mock.app.request('/_mock/reset', { method: 'POST' })
  expect((await settings()).body).toMatchObject({ allow_insecure_webhooks: false })
  expect((await register('http://127.0.0.1:9/hook')).status).toBe(422)
})

it('refuses a body with an unknown or mistyped setting, and changes nothing', async () => {
  mock = await createMock()
  for (const bad of [{ rate_limit: false }, { rate_limits: 'no' }, []]) {
    const res = await settings(bad as Record<string, unknown>)
    expect(res.status).toBe(422)
    expect(res.body).toMatchObject({ error: { code: 'INVALID_INPUT', retryable: false } })
  }
  expect((await settings()).body).toEqual({ rate_limits: true, allow_insecure_webhooks: false })
})
