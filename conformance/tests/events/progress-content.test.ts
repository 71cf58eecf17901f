/**
 * Public progress content (Events, first paragraph; Item envelope and page): a tool call is published as a
 * tool.started event and a TOOL_CALL item with the tool name and call id only, never the tool's arguments or
 * results; a settled execution gets a USAGE item before its outcome. Tool calls and settlement cannot be
 * provoked on a real deployment, so these run on a mock (scripted executions, virtual time).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { req } from '../../support/req.js'
import { assumedRule, mockOnly, role } from '../../support/skip.js'
import type { Target } from '../../support/target.js'
import { useTarget } from '../../support/use-target.js'
import { newRun, newSession, unthrottled } from './flow.js'
import { closeAllStreams, eventOf, openRaw } from './sse-support.js'

const target = useTarget()
afterAll(() => {
  closeAllStreams()
})
afterEach(() => {
  closeAllStreams()
})

type PublicEvent = Record<string, unknown> & {
  event_id: string
  type: string
  sequence: number
  data: Record<string, unknown>
}
type Item = { id: string; sequence: number; content: Record<string, unknown> & { kind: string } }

/** A script with two tool calls whose arguments and results hold the marker (they must never come out). */
const toolScript = (marker: string) => ({
  steps: [
    { at: 1, step: 'running' },
    {
      at: 2,
      step: 'tool',
      name: 'web_search',
      call_id: 'call-1',
      arguments: { query: marker },
      result: { hits: [marker] },
    },
    { at: 3, step: 'tool', name: 'read_file', arguments: { path: marker }, result: marker },
    { at: 4, step: 'spend', su: 0.5 },
    {
      at: 4,
      step: 'output',
      output: { contract: 'required', type: 'TEXT', text: 'The summary.' },
    },
    { at: 5, step: 'succeed' },
  ],
})

const OUTCOME_TYPE = /^(turn|run)\.(completed|failed|canceled|expired)$/

/** Every event of an ended Session or Run: the stream replays them, then the test closes it. */
async function eventsOf(path: string): Promise<{ events: PublicEvent[]; text: string }> {
  const s = await openRaw(target.baseUrl, path, { key: target.world.keys.full })
  expect(s.status, s.text()).toBe(200)
  await s.waitFor((x) => x.events().some((f) => OUTCOME_TYPE.test(f.event ?? '')), 'the outcome')
  s.close()
  return { events: s.events().map((f) => eventOf(f) as PublicEvent), text: s.text() }
}

async function itemsOf(sessionId: string): Promise<{ items: Item[]; text: string }> {
  const res = await unthrottled(target, () =>
    target.api.get(`/v1/sessions/${sessionId}/items`, { key: target.world.keys.full }),
  )
  expect(res.status, res.text).toBe(200)
  return { items: (res.body as { items: Item[] }).items, text: res.text }
}

async function read(path: string): Promise<{ body: Record<string, unknown>; text: string }> {
  const res = await unthrottled(target, () => target.api.get(path, { key: target.world.keys.full }))
  expect(res.status, res.text).toBe(200)
  return { body: res.body as Record<string, unknown>, text: res.text }
}

/** A finished Turn of the given scenario: its events, items and detail. */
async function endedTurn(t: Target, scenario: string | Record<string, unknown>, text = 'Go.') {
  await t.control!.queueScenario(t.world.deployments.active, scenario)
  const receipt = await newSession(t, text)
  await t.control!.advance(10)
  const stream = await eventsOf(`/v1/sessions/${receipt.session_id}/events`)
  const items = await itemsOf(receipt.session_id)
  const turn = await read(receipt.status_url)
  return { receipt, stream, items, turn }
}

describe('public progress content', () => {
  it(`${req('EVT-004', 'EVT-002', 'SSE-008', 'ITEM-003')} publishes each tool call as tool.started and a TOOL_CALL item with the tool name and call id only`, async (ctx) => {
    mockOnly(ctx, target, 'scripts an execution that calls tools')
    const marker = `TOOL-${randomUUID()}`
    const { stream, items, turn } = await endedTurn(target, toolScript(marker))
    const tools = stream.events.filter((e) => e.type === 'tool.started')
    expect(tools.map((e) => e.data.tool_name)).toEqual(['web_search', 'read_file'])
    for (const e of tools) {
      expect(Object.keys(e.data).sort()).toEqual(['call_id', 'kind', 'tool_name'])
      expect(e.data.kind).toBe('TOOL_CALL')
      expect(typeof e.data.call_id).toBe('string')
      expect(e.data.call_id).not.toBe('')
    }
    expect(tools[0]!.data.call_id).toBe('call-1')
    expect(tools[1]!.data.call_id).not.toBe(tools[0]!.data.call_id)
    // The Session items hold the same records: one TOOL_CALL item per tool.started event.
    const toolItems = items.items.filter((i) => i.content.kind === 'TOOL_CALL')
    expect(toolItems.map((i) => i.id)).toEqual(tools.map((e) => e.event_id))
    expect(toolItems.map((i) => i.content)).toEqual(tools.map((e) => e.data))
    // The calls come while the Turn runs: before its outcome.
    const outcome = stream.events.find((e) => OUTCOME_TYPE.test(e.type))!
    for (const e of tools) expect(e.sequence).toBeLessThan(outcome.sequence)
    // EVT-002: the tool's arguments and results appear nowhere.
    for (const text of [stream.text, items.text, turn.text]) expect(text).not.toContain(marker)
  })

  it(`${req('EVT-004', 'SSE-008')} the built-in tool-call scenario calls tools on a Run's stream too`, async (ctx) => {
    const control = mockOnly(ctx, target, 'queues the tool-call scenario')
    const workflowId = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(workflowId, 'tool-call')
    const { run_id } = await newRun(target, workflowId)
    await control.advance(10)
    const { events } = await eventsOf(`/v1/runs/${run_id}/events`)
    const tools = events.filter((e) => e.type === 'tool.started')
    expect(tools.map((e) => e.data.tool_name)).toEqual(['web_search', 'read_file'])
    for (const e of tools) {
      expect(e.aggregate_kind).toBe('RUN')
      expect(Object.keys(e.data).sort()).toEqual(['call_id', 'kind', 'tool_name'])
    }
  })

  it(`${req('ITEM-007', 'ITEM-005')} a settled Turn has one USAGE item, before its OUTCOME, with the Turn's final usage`, async (ctx) => {
    assumedRule(ctx, target, 'the USAGE item (usage.settled) and its fields')
    for (const scenario of ['succeed', 'fail', 'tool-call']) {
      const { stream, items, turn } = await endedTurn(target, scenario)
      const usage = (turn.body as { usage: { status: string; total_su: number | null } }).usage
      expect(usage.status, scenario).toBe('FINAL')
      const usageItems = items.items.filter((i) => i.content.kind === 'USAGE')
      expect(usageItems, scenario).toHaveLength(1)
      expect(usageItems[0]!.content).toEqual({
        kind: 'USAGE',
        status: 'FINAL',
        total_su: usage.total_su,
      })
      const outcome = items.items.find((i) => i.content.kind === 'OUTCOME')!
      expect(usageItems[0]!.sequence).toBeLessThan(outcome.sequence)
      expect(outcome.content.usage).toEqual({ status: 'FINAL', total_su: usage.total_su })
      // On the stream it is the usage.settled event of the same record.
      const event = stream.events.find((e) => e.data.kind === 'USAGE')!
      expect(event.type).toBe('usage.settled')
      expect(event.event_id).toBe(usageItems[0]!.id)
    }
  })

  it(`${req('ITEM-007')} a settled Run streams its USAGE before its outcome, with the Run's final usage`, async (ctx) => {
    assumedRule(ctx, target, 'the USAGE item (usage.settled) and its fields')
    const workflowId = role(ctx, target.world.workflows.available, 'available workflow')
    const { run_id } = await newRun(target, workflowId)
    await target.control!.advance(60)
    const { events } = await eventsOf(`/v1/runs/${run_id}/events`)
    const run = (await read(`/v1/runs/${run_id}`)).body as {
      run: { usage: { status: string; total_su: number | null } }
    }
    const usage = events.filter((e) => e.type === 'usage.settled')
    expect(usage).toHaveLength(1)
    expect(usage[0]!.data).toEqual({
      kind: 'USAGE',
      status: 'FINAL',
      total_su: run.run.usage.total_su,
    })
    const outcome = events.find((e) => OUTCOME_TYPE.test(e.type))!
    expect(usage[0]!.sequence).toBeLessThan(outcome.sequence)
  })
})
