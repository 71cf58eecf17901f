/**
 * Upload retention and account rules: a pre-uploaded file's expires_at (24 hours), the 50 SU minimum balance
 * (not charged) and the Project storage limit. Balance and storage rules need the mock's control API.
 */
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { helloTxt, upload } from '../../support/uploads.js'

const DAY_S = 24 * 3600

const target = useTarget()

type FileReceipt = { file_id: string; size_bytes: number; expires_at: string }
/** Mock-only rules need virtual time and the control API; on a real target the test is skipped. */
const control = (ctx: { skip: (note?: string) => void }) => {
  if (!target.capabilities.virtualTime || !target.control)
    ctx.skip('mock only: needs virtual time and the control API')
  return target.control!
}

async function balance(): Promise<number> {
  const { projects } = await target.control!.fixtures()
  const p = projects.find((x) => x.id === target.world.projectId) as unknown as {
    su_balance: number
  }
  return p.su_balance
}

describe('upload retention, balance and storage', () => {
  it(`${req('RET-005')} gives a pre-uploaded file expires_at 24 hours after upload`, async () => {
    const res = await upload(target, helloTxt())
    expect(res.status).toBe(201)
    const expiresAt = Date.parse((res.body as FileReceipt).expires_at)
    if (target.control) {
      const now = Date.parse((await target.control.clock()).now)
      expect(expiresAt).toBe(now + DAY_S * 1000)
    } else {
      const serverNow = Date.parse(res.headers['date'] ?? '')
      expect(Math.abs(expiresAt - (serverNow + DAY_S * 1000))).toBeLessThan(120_000)
    }
  })

  it(`${req('BUD-008', 'ERR-079', 'ERR-017')} refuses an upload with 402 MINIMUM_SU_REQUIRED below 50 SU and accepts it at 50 SU`, async (ctx) => {
    const mock = control(ctx)
    await mock.setBalance(target.world.projectId, 49.99)
    expectError(await upload(target, helloTxt()), 'MINIMUM_SU_REQUIRED')
    await mock.setBalance(target.world.projectId, 50)
    expect((await upload(target, helloTxt())).status).toBe(201)
  })

  it(`${req('BUD-009')} does not charge the 50 SU minimum: the balance is unchanged by an upload`, async (ctx) => {
    const mock = control(ctx)
    await mock.setBalance(target.world.projectId, 50)
    expect((await upload(target, helloTxt())).status).toBe(201)
    expect(await balance()).toBe(50)
    await mock.setBalance(target.world.projectId, 10)
    expectError(await upload(target, helloTxt()), 'MINIMUM_SU_REQUIRED')
    expect(await balance()).toBe(10)
  })

  it(`${req('SIZE-013', 'ERR-056')} refuses an upload that would take Project storage over its limit with 413 PROJECT_STORAGE_LIMIT`, async (ctx) => {
    const mock = control(ctx)
    const size = helloTxt().content.byteLength
    await mock.setStorageLimit(target.world.projectId, 2 * size)
    expect((await upload(target, helloTxt())).status).toBe(201)
    expect((await upload(target, helloTxt())).status).toBe(201)
    expectError(await upload(target, helloTxt()), 'PROJECT_STORAGE_LIMIT')
  })

  it(`${req('RET-014', 'SIZE-013')} stops counting an expired file against storage exactly at its expires_at`, async (ctx) => {
    const mock = control(ctx)
    const size = helloTxt().content.byteLength
    await mock.setStorageLimit(target.world.projectId, size)
    const first = await upload(target, helloTxt())
    expect(first.status).toBe(201)
    const expiresAt = Date.parse((first.body as FileReceipt).expires_at)
    const now = Date.parse((await mock.clock()).now)
    await mock.advance((expiresAt - now) / 1000 - 1)
    expectError(await upload(target, helloTxt()), 'PROJECT_STORAGE_LIMIT')
    await mock.advance(1)
    expect((await upload(target, helloTxt())).status).toBe(201)
  })
})
