/**
 * List responses (Limits > Sizes and counts: at most 100 items and 256 KiB; Turn detail: next_cursor): every
 * page of outputs, in the Run and Turn reads and in their output lists, ends before 256 KiB with a
 * next_cursor that leads to the rest; a first page that holds every output gives no cursor to an empty page.
 */
import { expect, it } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { req } from '../../support/req.js'
import { readRun, startRun } from '../../support/runs.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const MAX_LIST_BYTES = 256 * 1024
const bytes = (res: ApiResponse) => Buffer.byteLength(res.text)
type Page = { outputs: { id: string; key: string }[]; next_cursor: string | null }

/** Follows next_cursor through `path` from a first page; every page within 256 KiB. Returns all keys. */
async function followPages(path: string, first: Page): Promise<string[]> {
  const keys = first.outputs.map((o) => o.key)
  let cursor = first.next_cursor
  for (let i = 0; cursor !== null && i < 20; i++) {
    const res = await target.api.get(path, {
      key: target.world.keys.full,
      query: { after: cursor },
    })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expect(bytes(res)).toBeLessThanOrEqual(MAX_LIST_BYTES)
    const page = res.body as Page
    expect(page.outputs.length).toBeGreaterThan(0)
    keys.push(...page.outputs.map((o) => o.key))
    cursor = page.next_cursor
  }
  return keys
}

async function finishedTurn(scenario: string): Promise<SessionReceipt> {
  const control = target.control!
  await control.queueScenario(target.world.deployments.active, scenario)
  const res = await createSession(target, { input: [{ type: 'TEXT', text: 'Report.' }] })
  expect(res.status, res.text).toBe(202)
  await control.advance(10)
  return res.body as SessionReceipt
}

it(`${req('SIZE-014', 'RUN-017')} ends the Run read and every Run output page before 256 KiB, with a next_cursor to the rest`, async (ctx) => {
  const control = mockOnly(ctx, target, 'a scripted Run with outputs over 256 KiB')
  const wf = role(ctx, target.world.workflows.available, 'available workflow')
  await control.queueScenario(wf, 'large-outputs')
  const { run_id } = await startRun(target, wf)
  await control.advance(10)
  const detail = await target.api.get(`/v1/runs/${run_id}`, { key: target.world.keys.full })
  expect(detail.status).toBe(200)
  expect(bytes(detail)).toBeLessThanOrEqual(MAX_LIST_BYTES)
  const body = (await readRun(target, run_id)) as unknown as Page & { run: { status: string } }
  expect(body.run.status).toBe('SUCCEEDED')
  expect(body.next_cursor).not.toBeNull()
  const keys = await followPages(`/v1/runs/${run_id}/outputs`, body)
  expect(keys).toHaveLength(6)
  expect(new Set(keys).size).toBe(6)
  // The output list from its start: pages within 256 KiB too, the same six outputs.
  const first = await target.api.get(`/v1/runs/${run_id}/outputs`, {
    key: target.world.keys.full,
    query: { limit: 100 },
  })
  expect(bytes(first)).toBeLessThanOrEqual(MAX_LIST_BYTES)
  expect(await followPages(`/v1/runs/${run_id}/outputs`, first.body as Page)).toEqual(keys)
})

it(`${req('SIZE-014', 'SES-022')} ends the Turn detail and every Turn output page before 256 KiB, with a next_cursor to the rest`, async (ctx) => {
  mockOnly(ctx, target, 'a scripted Turn with outputs over 256 KiB')
  const r = await finishedTurn('large-outputs')
  const detail = await target.api.get(r.status_url, { key: target.world.keys.full })
  expect(detail.status).toBe(200)
  expect(bytes(detail)).toBeLessThanOrEqual(MAX_LIST_BYTES)
  const turn = detail.body as Page & { status: string }
  expect(turn.status).toBe('SUCCEEDED')
  expect(turn.next_cursor).not.toBeNull()
  const keys = await followPages(`${r.status_url}/outputs`, turn)
  expect(keys).toHaveLength(6)
  expect(new Set(keys).size).toBe(6)
})

it(`${req('SES-022')} gives no next_cursor when the Turn detail's first page holds every output`, async (ctx) => {
  mockOnly(ctx, target, 'a scripted Turn with exactly 50 outputs')
  const r = await finishedTurn('fifty-outputs')
  const res = await target.api.get(r.status_url, { key: target.world.keys.full })
  const turn = res.body as Page & { status: string }
  expect(turn.status).toBe('SUCCEEDED')
  expect(turn.outputs).toHaveLength(50)
  expect(turn.next_cursor).toBeNull()
})
