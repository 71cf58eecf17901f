import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createMock } from '../index.js'
import { openDb } from '../store/db.js'

describe('control token', () => {
  it('requires the token on every control path when the mock has one, and leaves /v1 alone', async () => {
    const mock = await createMock({ controlToken: 's3cret-token' })
    try {
      const get = (path: string, auth?: string) =>
        mock.app.request(path, auth ? { headers: { Authorization: auth } } : {})
      for (const auth of [undefined, 'Bearer wrong', 'Bearer s3cret-tokenX', 's3cret-token']) {
        const res = await get('/_mock/clock', auth)
        expect(res.status).toBe(401)
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
          'INVALID_API_KEY',
        )
      }
      const reset = await mock.app.request('/_mock/reset', { method: 'POST' })
      expect(reset.status).toBe(401)
      expect((await get('/_mock/clock', 'Bearer s3cret-token')).status).toBe(200)
      expect((await get('/v1/deployments', 'Bearer sk_test_a_full')).status).toBe(200)
    } finally {
      mock.close()
    }
  })

  it('leaves the control API open without a token (local use)', async () => {
    const mock = await createMock()
    try {
      expect((await mock.app.request('/_mock/clock')).status).toBe(200)
    } finally {
      mock.close()
    }
  })
})

describe('durability', () => {
  it('syncs every commit of a file store with durable (synchronous=FULL), NORMAL otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-durable-'))
    try {
      const normal = openDb(join(dir, 'a.db'))
      const full = openDb(join(dir, 'b.db'), { durable: true })
      expect(normal.raw.pragma('synchronous', { simple: true })).toBe(1)
      expect(full.raw.pragma('synchronous', { simple: true })).toBe(2)
      normal.close()
      full.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
