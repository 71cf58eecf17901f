/**
 * Delegated access over HTTP (where a header's presence is looked up in the headers Node parsed) and in
 * process: every delegated-access header, in any case, is refused with 403 ACTING_FORBIDDEN.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { delegatedAccessNames } from '../http/operations.js'
import { createMock, type Mock } from '../index.js'
import { listen, type Listening } from '../server.js'

let mock: Mock
let served: Listening
beforeAll(async () => {
  mock = await createMock({ rateLimits: false })
  served = await listen({ fetch: mock.app.fetch, deps: mock.deps })
})
afterAll(async () => {
  await served.close()
  mock.close()
})

const H = { Authorization: 'Bearer sk_test_a_full' }

it('[AUTH-008][ERR-030] refuses every delegated-access header, whatever its case, over HTTP and in process', async () => {
  const { headers } = delegatedAccessNames()
  expect(headers.length).toBeGreaterThan(0)
  for (const name of headers) {
    for (const spelled of [name, name.toUpperCase()]) {
      const overHttp = await fetch(`${served.url}/v1/deployments`, {
        headers: { ...H, [spelled]: 'someone-else' },
      })
      const inProcess = await mock.app.request('/v1/deployments', {
        headers: { ...H, [spelled]: 'someone-else' },
      })
      for (const res of [overHttp, inProcess]) {
        expect(res.status, spelled).toBe(403)
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
          'ACTING_FORBIDDEN',
        )
      }
    }
  }
  const plain = await fetch(`${served.url}/v1/deployments`, { headers: H })
  expect(plain.status).toBe(200)
  await plain.arrayBuffer()
})
