/**
 * Session items (Item envelope and page; Events: polling and SSE read the same public records): the ItemPage
 * shape, content kinds, paging with limit and after (assumed query parameters), cursors of another Session,
 * the list bounds, and retention (SESSION_EXPIRED).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, describe, expect, it, type TestContext } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { assumedRule, mockOnly } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { addTurn, DAY_S, endedSession, newSession, unthrottled, UUID } from './flow.js'
import { closeAllStreams, eventOf, openRaw } from './sse-support.js'

const target = useTarget()
afterAll(() => {
  closeAllStreams()
})
afterEach(() => {
  closeAllStreams()
})

type Item = {
  id: string
  session_id: string
  turn_id: string | null
  sequence: number
  created_at: string
  content: Record<string, unknown> & { kind: string }
}
type ItemPage = { items: Item[]; next_cursor: string | null }

const itemsPath = (sessionId: string) => `/v1/sessions/${sessionId}/items`

async function listItems(sessionId: string, query?: Record<string, string | number>) {
  return unthrottled(target, () =>
    target.api.get(itemsPath(sessionId), { key: target.world.keys.full, query }),
  )
}

async function page(sessionId: string, query?: Record<string, string | number>): Promise<ItemPage> {
  const res = await listItems(sessionId, query)
  expect(res.status, res.text).toBe(200)
  return res.body as ItemPage
}

/**
 * Every item of a Session: the first page, then (while next_cursor is set) the next pages. The document gives
 * ItemPage a next_cursor but not the items read's query parameters; the mock's `after` (the parameter the
 * Run outputs read documents for its next_cursor) is sent, and a target that refuses it skips the test.
 */
async function allItems(ctx: TestContext, sessionId: string): Promise<Item[]> {
  const items: Item[] = []
  let after: string | null = null
  for (let guard = 0; guard < 50; guard++) {
    const res = await listItems(sessionId, after === null ? undefined : { after })
    if (after !== null && res.status >= 400 && res.status < 500)
      ctx.skip(
        `the items read refuses after=<next_cursor> (${res.status}): its paging is not shown`,
      )
    expect(res.status, res.text).toBe(200)
    const p = res.body as ItemPage
    items.push(...p.items)
    if (p.next_cursor === null) return items
    expect(p.next_cursor).not.toBe(after)
    after = p.next_cursor
  }
  throw new Error(`more than 50 pages of items in Session ${sessionId}`)
}

/** A Session with `turns` finished Turns of the `succeed` scenario (mock only beyond one Turn). */
async function sessionWithTurns(turns: number) {
  const control = target.control!
  const receipt = await newSession(target)
  await control.advance(6)
  for (let i = 1; i < turns; i++) {
    await addTurn(target, receipt.session_id)
    await control.advance(6)
  }
  return receipt
}

const KINDS = [
  'MESSAGE',
  'TOOL_CALL',
  'PROGRESS',
  'REQUIRED_ACTION',
  'ARTIFACT',
  'OUTCOME',
  'STEP_OUTCOME',
  'USAGE',
]

describe('Session items', () => {
  it(`${req('ITEM-001', 'ITEM-002', 'ITEM-003', 'ITEM-004', 'ITEM-005')} lists the Session's records as an ItemPage`, async (ctx) => {
    // A mock runs `succeed` on virtual time; a real target's Turn is polled until it ends (endedSession).
    const receipt = await endedSession(target)
    if (receipt.status !== 'SUCCEEDED') ctx.skip(`the Turn ended ${receipt.status}, not SUCCEEDED`)
    const first = await page(receipt.session_id)
    // A page may end before the list does (next_cursor set); the mock's one Turn fits one page.
    await mockChoice(target, 'one page for a Session of one Turn', () =>
      expect(first.next_cursor).toBeNull(),
    )
    if (first.next_cursor !== null) expect(first.next_cursor).toMatch(UUID)
    const items = await allItems(ctx, receipt.session_id)
    expect(items.length).toBeGreaterThanOrEqual(2)
    for (const item of items) {
      expect(item.id).toMatch(UUID)
      expect(item.session_id).toBe(receipt.session_id)
      expect(item.turn_id).toBe(receipt.turn_id)
      expect(Number.isInteger(item.sequence)).toBe(true)
      expect(Number.isNaN(Date.parse(item.created_at))).toBe(false)
      expect(typeof item.content.kind).toBe('string')
      // Kinds of 1.3.0; a later minor version may add kinds, which a client ignores (VER-003).
      await mockChoice(target, 'only the content kinds of 1.3.0', () =>
        expect(KINDS).toContain(item.content.kind),
      )
    }
    const sequences = items.map((i) => i.sequence)
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b))
    // The mock's `succeed` script says one message; a real Turn may say any number.
    const messages = items.filter((i) => i.content.kind === 'MESSAGE')
    if (target.control) expect(messages.length).toBeGreaterThan(0)
    for (const message of messages) {
      expect(typeof message.content.text).toBe('string')
      expect((message.content.text as string).length).toBeLessThanOrEqual(65_536)
      expect(['INTERMEDIATE', 'PARTIAL', 'FINAL', undefined]).toContain(message.content.visibility)
    }
    const outcome = items.find((i) => i.content.kind === 'OUTCOME')!
    expect(outcome.content).toMatchObject({ status: 'SUCCEEDED', error: null })
    const itemIds = outcome.content.item_ids as string[]
    expect(itemIds.length).toBeLessThanOrEqual(100)
    for (const id of itemIds) expect(id).toMatch(UUID)
    // Which items item_ids names is not shown: the mock names every MESSAGE and ARTIFACT item of the Turn.
    await mockChoice(target, 'OUTCOME item_ids name every message of the Turn', () => {
      for (const message of messages) expect(itemIds).toContain(message.id)
    })
    await mockChoice(target, 'OUTCOME item_ids name items of the Session', () => {
      for (const id of itemIds) expect(items.map((i) => i.id)).toContain(id)
    })
    if (target.control) expect(outcome.content.usage).toMatchObject({ status: 'FINAL' })
  })

  it(`${req('OUT-005', 'ITEM-002')} gives a TEXT output the item_id of its Session item (the MESSAGE, or the ARTIFACT of a TEXT delivered as a file)`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted Turns on virtual time')
    const receipt = await sessionWithTurns(1)
    await control.queueScenario(target.world.deployments.active, 'large-text')
    const large = await addTurn(target, receipt.session_id)
    await control.advance(10)
    const { items } = await page(receipt.session_id, { limit: 100 })
    for (const turnId of [receipt.turn_id, large.turn_id]) {
      const res = await target.api.get(`/v1/sessions/${receipt.session_id}/turns/${turnId}`, {
        key: target.world.keys.full,
      })
      const text = (res.body as { outputs: { type: string; item_id?: string }[] }).outputs.find(
        (o) => o.type === 'TEXT',
      )!
      const item = items.find((i) => i.id === text.item_id)
      expect(item, `no Session item ${text.item_id}`).toBeDefined()
      expect(item!.turn_id).toBe(turnId)
      expect(['MESSAGE', 'ARTIFACT']).toContain(item!.content.kind)
    }
  })

  it(`${req('EVT-001', 'ITEM-001')} holds the same records as the event stream`, async (ctx) => {
    const receipt = await endedSession(target)
    if (receipt.status !== 'SUCCEEDED') ctx.skip(`the Turn ended ${receipt.status}, not SUCCEEDED`)
    const s = await openRaw(target.baseUrl, `/v1/sessions/${receipt.session_id}/events`, {
      key: target.world.keys.full,
    })
    await s.waitFor((x) => x.events().some((f) => f.event === 'turn.completed'), 'turn.completed')
    const events = s.events().map(eventOf)
    const items = await allItems(ctx, receipt.session_id)
    // The same public records, in the same order: one item per event, of the same content kind.
    expect(items.map((i) => i.content.kind)).toEqual(events.map((e) => e.data.kind))
    // Whether an item carries its event's id, sequence and content as they are is not shown.
    await mockChoice(target, 'an item is its event: same id, sequence and content', () => {
      expect(items.map((i) => i.id)).toEqual(events.map((e) => e.event_id))
      expect(items.map((i) => i.sequence)).toEqual(events.map((e) => e.sequence))
      expect(items.map((i) => i.content)).toEqual(events.map((e) => e.data))
    })
  })

  it(`${req('ITEM-001', 'SIZE-014')} pages with limit and after until next_cursor is null`, async (ctx) => {
    mockOnly(ctx, target, 'moves virtual time')
    assumedRule(ctx, target, 'items query parameters limit and after')
    const receipt = await sessionWithTurns(3)
    const all = (await page(receipt.session_id)).items
    expect(all.length).toBeGreaterThanOrEqual(6)
    const seen: Item[] = []
    let after: string | null = null
    for (let guard = 0; guard < 20; guard++) {
      const p: ItemPage = await page(receipt.session_id, after ? { limit: 2, after } : { limit: 2 })
      expect(p.items.length).toBeLessThanOrEqual(2)
      seen.push(...p.items)
      if (p.next_cursor === null) break
      expect(p.next_cursor).toMatch(UUID)
      expect(p.next_cursor).toBe(p.items.at(-1)!.id)
      after = p.next_cursor
    }
    expect(seen.map((i) => i.id)).toEqual(all.map((i) => i.id))
  })

  it(`${req('ERR-038')} answers 400 INVALID_CURSOR to a cursor of another Session`, async (ctx) => {
    mockOnly(ctx, target, 'moves virtual time')
    assumedRule(ctx, target, 'items query parameter after')
    const a = await sessionWithTurns(1)
    const b = await newSession(target, 'Another one.')
    const cursorOfA = (await page(a.session_id)).items[0]!.id
    expectError(await listItems(b.session_id, { after: cursorOfA }), 'INVALID_CURSOR')
    expectError(await listItems(b.session_id, { after: randomUUID() }), 'INVALID_CURSOR')
    expectError(await listItems(b.session_id, { after: 'not-a-cursor' }), 'INVALID_CURSOR')
  })

  it(`${req('SIZE-014')} holds at most limit items, at most 100, and 50 by default`, async (ctx) => {
    mockOnly(ctx, target, 'moves virtual time')
    assumedRule(ctx, target, 'items query parameter limit')
    const receipt = await sessionWithTurns(2)
    const all = (await page(receipt.session_id)).items
    expect(all.length).toBeLessThanOrEqual(50)
    expect((await page(receipt.session_id, { limit: 1 })).items).toHaveLength(1)
    expect((await page(receipt.session_id, { limit: 100 })).items).toEqual(all)
  })

  it(`${req('RET-003', 'EVT-003')} answers 410 SESSION_EXPIRED once the Session is idle for 30 days`, async (ctx) => {
    const control = mockOnly(ctx, target, 'moves virtual time by weeks')
    const receipt = await sessionWithTurns(1)
    await control.advance(29 * DAY_S)
    expect((await page(receipt.session_id)).items.length).toBeGreaterThan(0)
    await control.advance(2 * DAY_S)
    expectError(await listItems(receipt.session_id), 'SESSION_EXPIRED')
  })
})
