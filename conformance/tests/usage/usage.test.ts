/**
 * GET /v1/usage (Usage cost category; Usage and works; SU budgets; Authentication 4): the response fields, the
 * usage:read scope, the filters (preparations null with any), PENDING until settled, and the categories summing
 * to the total. A filter naming a resource outside the key's access is 404 like an absent one (the mock's
 * choice; the document does not say). Category names and the preparations shape are x-assumed.
 */
import { expect, it } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { POLL_INTERVAL_MS, waitUntilEnded } from '../../support/poll.js'
import { expectError } from '../../support/expect-error.js'
import { retryRateLimited } from '../../support/pace.js'
import { req } from '../../support/req.js'
import {
  createSession,
  newIdempotencyKey,
  type SessionReceipt,
} from '../../support/session-create.js'
import { assumedRule, mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

type CategoryUsage = {
  status: 'PENDING' | 'FINAL'
  total_su: number | null
  settled_su: number
  reserved_su: number
}
type Usage = {
  status: 'PENDING' | 'FINAL'
  total_su: number | null
  categories: Record<string, CategoryUsage>
  preparations: (Record<string, unknown> & Partial<CategoryUsage>) | null
}

const usage = (query: Record<string, string> = {}, key = target.world.keys.full) =>
  retryRateLimited(target, () => target.api.get('/v1/usage', { key, query }), 10)

const round = (n: number) => Math.round(n * 1e6) / 1e6
const sum = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0))

async function newSession(maxSu?: number): Promise<SessionReceipt> {
  const res = await createSession(target, {
    input: [{ type: 'TEXT', text: 'Summarise the report.' }],
    ...(maxSu === undefined ? {} : { limits: { max_su: maxSu } }),
  })
  expect(res.status, res.text).toBe(202)
  return res.body as SessionReceipt
}

it(`${req('USAGE-001', 'USAGE-002')} a usage answer has status, total_su, categories and preparations; each category has its four fields`, async () => {
  const res = await usage()
  expect(res.status).toBe(200)
  const body = res.body as Usage
  expect(Object.keys(body)).toEqual(
    expect.arrayContaining(['status', 'total_su', 'categories', 'preparations']),
  )
  // The document names the categories and their four fields (CostCategoryUsage), not how they are held: a map
  // by name is the mock's choice (x-assumed); a list of them is read the same way.
  expect(typeof body.categories, res.text).toBe('object')
  expect(body.categories, res.text).not.toBeNull()
  await mockChoice(target, 'x-assumed: categories is a map of CostCategoryUsage by name', () => {
    expect(Array.isArray(body.categories)).toBe(false)
  })
  for (const category of Object.values(body.categories)) {
    expect(['PENDING', 'FINAL']).toContain(category.status)
    expect(category.total_su === null || typeof category.total_su === 'number').toBe(true)
    expect(typeof category.settled_su).toBe('number')
    expect(typeof category.reserved_su).toBe('number')
  }
})

it(`${req('USAGE-003', 'AUTH-004')} GET /v1/usage without usage:read is 403 INSUFFICIENT_SCOPE`, async (ctx) => {
  mockOnly(ctx, target, 'replaces a key’s scopes')
  const key = role(ctx, target.world.keys.worksOnly, 'works-only key')
  const narrowed = await target.api.post(
    `/_mock/keys/${key}/scopes`,
    { scopes: ['works:read', 'works:write'] },
    { check: false },
  )
  expect(narrowed.status).toBe(200)
  expectError(await target.api.get('/v1/usage', { key }), 'INSUFFICIENT_SCOPE')
})

it(`${req('USAGE-004')} with a deployment_id, session_id or turn_id filter, preparations is null`, async () => {
  const receipt = await newSession()
  const unfiltered = (await usage()).body as Usage
  expect(Object.keys(unfiltered)).toContain('preparations')
  // Unfiltered, what preparations holds is not shown; never null is the mock's choice.
  await mockChoice(target, 'not shown: preparations is an object when no filter is used', () => {
    expect(unfiltered.preparations).not.toBeNull()
  })
  const queries: Record<string, string>[] = [
    { deployment_id: target.world.deployments.active },
    { session_id: receipt.session_id },
    { turn_id: receipt.turn_id },
    { session_id: receipt.session_id, turn_id: receipt.turn_id },
  ]
  for (const query of queries) {
    const res = await usage(query)
    expect(res.status, JSON.stringify(query)).toBe(200)
    expect((res.body as Usage).preparations).toBeNull()
  }
})

it(`${req('AUTH-005', 'USAGE-004')} a works-only key reads usage; its filters reach no Deployment`, async (ctx) => {
  const key = role(ctx, target.world.keys.worksOnly, 'works-only key')
  const res = await usage({}, key)
  expect(res.status).toBe(200)
  expect(Object.keys(res.body as Usage)).toContain('preparations')
  await mockChoice(target, 'not shown: preparations is an object when no filter is used', () => {
    expect((res.body as Usage).preparations).not.toBeNull()
  })
  assumedRule(ctx, target, 'a filter outside access is 404')
  expectError(await usage({ deployment_id: target.world.deployments.active }, key), 'NOT_FOUND')
})

it(`${req('AUTH-009')} a filter naming an absent resource or one of another Project is 404 NOT_FOUND`, async (ctx) => {
  assumedRule(ctx, target, 'a filter outside access is 404')
  const absent = '00000000-0000-4000-8000-000000000000'
  for (const name of ['deployment_id', 'session_id', 'turn_id', 'run_id']) {
    expectError(await usage({ [name]: absent }), 'NOT_FOUND')
  }
  const other = role(ctx, target.world.keys.otherProject, 'key of another Project')
  const receipt = await newSession()
  expectError(await usage({ session_id: receipt.session_id }, other), 'NOT_FOUND')
  expectError(await usage({ turn_id: receipt.turn_id }, other), 'NOT_FOUND')
})

it(`${req('SES-019', 'BUD-007', 'RES-004')} a Turn that ended has usage FINAL with total_su a number >= 0 (null while PENDING)`, async () => {
  const receipt = await newSession()
  const status = await waitUntilEnded(target, receipt.status_url, { mockAdvanceS: 30 })
  expect(['SUCCEEDED', 'FAILED', 'CANCELED', 'EXPIRED']).toContain(status)
  type TurnUsage = { status: string; total_su: unknown }
  const turnUsage = async (): Promise<TurnUsage> => {
    const res = await target.api.get(receipt.status_url, { key: target.world.keys.full })
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    return (res.body as { usage: TurnUsage }).usage
  }
  // Settlement follows the end ("PENDING until settled"): a real target is read again at the polling
  // interval, a bounded number of times; settled at the end itself is the mock's choice.
  let usage = await turnUsage()
  await mockChoice(target, 'a Turn is settled when it ends (usage FINAL at once)', () => {
    expect(usage.status).toBe('FINAL')
  })
  for (let i = 0; i < 20 && usage.status === 'PENDING' && !target.control; i++) {
    expect(usage.total_su).toBeNull()
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
    usage = await turnUsage()
  }
  expect(usage.status).toBe('FINAL')
  expect(typeof usage.total_su, JSON.stringify(usage)).toBe('number')
  expect(usage.total_su as number).toBeGreaterThanOrEqual(0)
})

it(`${req('BUD-007', 'BUD-006')} usage is PENDING with a reservation while the Turn runs, then FINAL; categories sum to the total`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time')
  const receipt = await newSession(40)
  const pending = (await usage({ turn_id: receipt.turn_id })).body as Usage
  expect(pending.status).toBe('PENDING')
  expect(pending.total_su).toBeNull()
  expect(sum(Object.values(pending.categories).map((c) => c.reserved_su))).toBe(40)
  expect(Object.values(pending.categories).some((c) => c.status === 'PENDING')).toBe(true)
  const project = (await usage()).body as Usage
  expect(project.status).toBe('PENDING')

  await control.advance(30)
  const turn = await target.api.get(`/v1/sessions/${receipt.session_id}/turns/${receipt.turn_id}`, {
    key: target.world.keys.full,
  })
  const turnUsage = (turn.body as { usage: { status: string; total_su: number } }).usage
  expect(turnUsage.status).toBe('FINAL')
  const queries: Record<string, string>[] = [
    { turn_id: receipt.turn_id },
    { session_id: receipt.session_id },
    {},
  ]
  for (const query of queries) {
    const final = (await usage(query)).body as Usage
    expect(final.status).toBe('FINAL')
    expect(final.total_su).toBe(turnUsage.total_su)
    const categories = Object.values(final.categories)
    expect(categories.every((c) => c.status === 'FINAL' && c.reserved_su === 0)).toBe(true)
    expect(sum(categories.map((c) => c.total_su ?? NaN))).toBe(final.total_su)
  }
})

it(`${req('BUD-007')} a Turn's usage counts under its Deployment only`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time')
  const other = role(ctx, target.world.deployments.active2, 'second ACTIVE Deployment')
  const receipt = await newSession()
  await control.advance(30)
  const mine = (await usage({ deployment_id: target.world.deployments.active })).body as Usage
  const theirs = (await usage({ deployment_id: other })).body as Usage
  expect(mine.total_su).toBeGreaterThan(0)
  expect(theirs.total_su).toBe(0)
  const both = (await usage({ deployment_id: other, session_id: receipt.session_id })).body as Usage
  expect(both.total_su).toBe(0)
})

it(`${req('USAGE-002')} preparations usage is PENDING while a work preparation runs, then settled`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time')
  assumedRule(ctx, target, 'preparations shape and cost')
  const created = await retryRateLimited(target, () =>
    target.api.post(
      '/v1/works',
      { title: 'Monthly report', description: 'Prepare it.' },
      { key: target.world.keys.full, idem: newIdempotencyKey('work') },
    ),
  )
  expect(created.status).toBe(201)
  const before = (await usage()).body as Usage
  expect(before.preparations).toMatchObject({ status: 'PENDING', total_su: null, count: 1 })
  expect(before.preparations!.reserved_su).toBeGreaterThan(0)
  await control.advance(10)
  const after = (await usage()).body as Usage
  expect(after.preparations).toMatchObject({ status: 'FINAL', reserved_su: 0, count: 1 })
  expect(after.preparations!.total_su).toBe(before.preparations!.reserved_su)
  // Preparation cost is reported apart from the execution categories.
  expect(after.total_su).toBe(0)
})
