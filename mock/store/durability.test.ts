import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { TimerKinds } from '../clock/timer-kinds.js'
import { createMock, type Mock } from '../index.js'
import { enqueueScenario, listScenarioQueue } from './scenarios.js'

const dirs: string[] = []
const open: Mock[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true })
})

function kindsRecording(fired: string[]) {
  return (kinds: TimerKinds) =>
    kinds.register<string>('test.durable', (name, { nowMs }) => {
      fired.push(`${name}@${new Date(nowMs).toISOString()}`)
    })
}

describe('durability with --db', () => {
  it('keeps rows, pending timers and the clock when the process dies without cleanup', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-db-'))
    dirs.push(dir)
    const file = join(dir, 'state.db')

    const firstFired: string[] = []
    const first = await createMock({ db: file, timerKinds: kindsRecording(firstFired) })
    open.push(first)
    const start = first.deps.clock.nowMs()
    first.deps.scheduler.schedule('test.durable', start + 30_000, 'early')
    first.deps.scheduler.schedule('test.durable', start + 90_000, 'late-1')
    first.deps.scheduler.schedule('test.durable', start + 90_000, 'late-2')
    enqueueScenario(first.deps.db, 'aaaaaaaa-d000-4000-8000-000000000001', 'fail', 2)
    await first.clock.advance(60)
    expect(firstFired).toEqual(['early@2026-11-02T09:00:30.000Z'])
    const uuidsBefore = new Set(Array.from({ length: 5 }, () => first.deps.ids.uuid()))
    // No close(): like kill -9, the first connection is simply abandoned. A second one opens the same file.

    const secondFired: string[] = []
    const second = await createMock({ db: file, timerKinds: kindsRecording(secondFired) })
    open.push(second)
    expect(second.clock.now().toISOString()).toBe('2026-11-02T09:01:00.000Z')
    expect(second.deps.scheduler.pending()).toBe(2)
    expect(listScenarioQueue(second.deps.db)).toMatchObject([{ scenario: 'fail', remaining: 2 }])
    expect(second.fixtures().projects.map((p) => p.id)).toHaveLength(3)
    for (let i = 0; i < 5; i++) expect(uuidsBefore.has(second.deps.ids.uuid())).toBe(false)

    await second.clock.advance(60)
    expect(secondFired).toEqual([
      'late-1@2026-11-02T09:01:30.000Z',
      'late-2@2026-11-02T09:01:30.000Z',
    ])
    expect(second.deps.scheduler.pending()).toBe(0)
  })

  it("[TIME-001][RUN-008] keeps a Run's steps (the open step, the steps done, the queued time) across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-db-'))
    dirs.push(dir)
    const file = join(dir, 'state.db')
    const workflow = 'aaaaaaaa-f000-4000-8000-000000000001'
    const auth = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }
    const first = await createMock({ db: file })
    open.push(first)
    // Seven steps each queued 550 s: the seventh (from 3314) may wait only the 299 s left of 3,600 s.
    enqueueScenario(first.deps.db, workflow, 'queue-total', 1)
    const wf = (await (
      await first.app.request(`/v1/workflows/${workflow}`, { headers: auth })
    ).json()) as { published_version: number }
    const created = await first.app.request(`/v1/workflows/${workflow}/runs`, {
      method: 'POST',
      headers: { ...auth, 'Idempotency-Key': 'steps-restart' },
      body: JSON.stringify({ published_version: wf.published_version, input: { topic: 'x' } }),
    })
    expect(created.status).toBe(202)
    const { run_id } = (await created.json()) as { run_id: string }
    // The sixth step is open, waiting queued since 2762; five steps are done.
    await first.clock.advance(3200)
    // No close(): like kill -9.
    const second = await createMock({ db: file })
    open.push(second)
    const read = async () =>
      (
        (await (await second.app.request(`/v1/runs/${run_id}`, { headers: auth })).json()) as {
          run: { status: string; progress: { total: number; completed: number } }
        }
      ).run
    expect(await read()).toMatchObject({ status: 'RUNNING', progress: { total: 7, completed: 5 } })
    // The waits before the restart still count: the seventh step's window ends at 3613, not 3914.
    await second.clock.advance(412)
    expect(await read()).toMatchObject({ status: 'RUNNING', progress: { total: 7, completed: 6 } })
    await second.clock.advance(1)
    expect(await read()).toMatchObject({ status: 'EXPIRED', progress: { total: 7, completed: 6 } })
  })

  it('loads the fixtures only into a new store and keeps the stored world on restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-db-'))
    dirs.push(dir)
    const file = join(dir, 'state.db')
    const first = await createMock({ db: file })
    first.deps.db
      .stmt('UPDATE projects SET su_balance = 7 WHERE id = ?')
      .run('aaaaaaaa-0000-4000-8000-000000000000')
    first.close()
    const second = await createMock({ db: file })
    open.push(second)
    expect(second.fixtures().projects[0]?.su_balance).toBe(7)
    await second.reset()
    expect(second.fixtures().projects[0]?.su_balance).toBe(10000)
  })
})
