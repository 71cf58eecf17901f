/**
 * The steps of a Run (Run: progress; Workflows and Runs, request rule 2; Limits > Time limits; States rule 4):
 * execution_seconds and queue_seconds bound each step, the queue waits of all steps together are at most
 * 3,600 s, progress counts unique steps (a retry once), and each step end is a run.step.completed while the
 * Run goes on. Steps and their timing cannot be provoked on a real deployment: mock only (scripted Runs,
 * virtual time).
 */
import { afterAll, afterEach, describe, expect, it, type TestContext } from 'vitest'
import { req } from '../../support/req.js'
import { mockOnly, role } from '../../support/skip.js'
import { readRun, startRun, type RunView } from '../../support/runs.js'
import { useTarget } from '../../support/use-target.js'
import type { MockControl } from '../../support/control.js'
import { closeAllStreams, eventOf, openRaw } from '../events/sse-support.js'

const target = useTarget()
afterAll(() => {
  closeAllStreams()
})
afterEach(() => {
  closeAllStreams()
})

type StepEvent = { type: string; sequence: number; data: Record<string, unknown> }

/** The control API and the world's available workflow, or a skip. */
function setup(ctx: TestContext, why: string): { control: MockControl; workflow: string } {
  const control = mockOnly(ctx, target, why)
  return { control, workflow: role(ctx, target.world.workflows.available, 'available workflow') }
}

/** Queues a script (a built-in name or inline steps) and starts a Run with the given limits. */
async function scriptedRun(
  control: MockControl,
  workflow: string,
  scenario: string | Record<string, unknown>,
  limits: Record<string, number> = {},
): Promise<string> {
  await control.queueScenario(workflow, scenario)
  const receipt = await startRun(target, workflow, { limits })
  return receipt.run_id
}

const runOf = async (id: string): Promise<RunView> => (await readRun(target, id)).run

/** Advances virtual time to `atS` seconds after the Run was accepted (clock positions tracked by the test). */
function clockFrom(control: MockControl) {
  let now = 0
  return async (atS: number) => {
    if (atS > now) await control.advance(atS - now)
    now = Math.max(now, atS)
  }
}

/** Every event of a Run's stream up to its outcome. */
async function runEvents(runId: string): Promise<StepEvent[]> {
  const s = await openRaw(target.baseUrl, `/v1/runs/${runId}/events`, {
    key: target.world.keys.full,
  })
  expect(s.status, s.text()).toBe(200)
  await s.waitFor(
    (x) => x.events().some((f) => /^run\.(completed|failed|canceled|expired)$/.test(f.event ?? '')),
    'the Run outcome',
  )
  s.close()
  return s.events().map((f) => eventOf(f) as StepEvent)
}

/** An inline Run script: running at 1, then the given steps, then the required output and the end. */
const script = (steps: Record<string, unknown>[], endAt: number) => ({
  steps: [
    { at: 1, step: 'running' },
    ...steps,
    {
      at: endAt,
      step: 'output',
      output: { contract: 'required', type: 'TEXT', text: 'Done.' },
    },
    { at: endAt, step: 'succeed' },
  ],
})

describe('Run steps', () => {
  it(`${req('RUN-038', 'RUN-029')} applies execution_seconds to each step: a Run of three 30-minute steps runs 1.5 hours within execution_seconds 1900`, async (ctx) => {
    const { control, workflow } = setup(ctx, 'scripts a multi-step Run on virtual time')
    const id = await scriptedRun(control, workflow, 'multi-step', { execution_seconds: 1900 })
    const at = clockFrom(control)
    await at(3000)
    // Past execution_seconds since the Run started, in its second step: still running.
    expect((await runOf(id)).status).toBe('RUNNING')
    await at(5502)
    const run = await runOf(id)
    expect(run.status).toBe('SUCCEEDED')
    expect(run.error).toBeNull()
  })

  it(`${req('RUN-038', 'EVT-005')} ends the Run FAILED with EXECUTION_TIMEOUT when one step runs past execution_seconds; that step ends FAILED`, async (ctx) => {
    const { control, workflow } = setup(ctx, 'scripts a multi-step Run on virtual time')
    const id = await scriptedRun(
      control,
      workflow,
      script(
        [
          { at: 2, step: 'step_start', id: 'short' },
          { at: 50, step: 'step_end' },
          { at: 51, step: 'step_start', id: 'long' },
          { at: 251, step: 'step_end' },
        ],
        252,
      ),
      { execution_seconds: 120 },
    )
    const at = clockFrom(control)
    await at(170)
    expect((await runOf(id)).status).toBe('RUNNING')
    await at(171)
    const run = await runOf(id)
    expect(run.status).toBe('FAILED')
    expect(run.error).toMatchObject({ code: 'EXECUTION_TIMEOUT', retryable: false })
    expect(run.progress).toEqual({ total: 2, completed: 1 })
    const steps = (await runEvents(id)).filter((e) => e.type === 'run.step.completed')
    expect(steps.map((e) => e.data)).toEqual([
      { kind: 'STEP_OUTCOME', status: 'SUCCEEDED', step_id: 'short' },
      { kind: 'STEP_OUTCOME', status: 'FAILED', step_id: 'long' },
    ])
  })

  it(`${req('RUN-007', 'RUN-008', 'EVT-005', 'STATE-027')} counts progress by unique steps, a retried step once; each step end is a run.step.completed before the Run's outcome`, async (ctx) => {
    const { control, workflow } = setup(ctx, 'scripts a multi-step Run on virtual time')
    const id = await scriptedRun(control, workflow, 'multi-step')
    const at = clockFrom(control)
    const seen: { at: number; status: string; progress: RunView['progress'] }[] = []
    for (const t of [1, 1803, 1901, 3701, 5502]) {
      await at(t)
      const run = await runOf(id)
      seen.push({ at: t, status: run.status, progress: run.progress })
    }
    expect(seen).toEqual([
      { at: 1, status: 'RUNNING', progress: { total: 3, completed: 0 } },
      { at: 1803, status: 'RUNNING', progress: { total: 3, completed: 1 } },
      // analyze ended FAILED at 1900 and is retried: not a step done.
      { at: 1901, status: 'RUNNING', progress: { total: 3, completed: 1 } },
      { at: 3701, status: 'RUNNING', progress: { total: 3, completed: 2 } },
      { at: 5502, status: 'SUCCEEDED', progress: { total: 3, completed: 3 } },
    ])
    const events = await runEvents(id)
    const steps = events.filter((e) => e.type === 'run.step.completed')
    expect(steps.map((e) => e.data)).toEqual([
      { kind: 'STEP_OUTCOME', status: 'SUCCEEDED', step_id: 'collect' },
      { kind: 'STEP_OUTCOME', status: 'FAILED', step_id: 'analyze' },
      { kind: 'STEP_OUTCOME', status: 'SUCCEEDED', step_id: 'analyze' },
      { kind: 'STEP_OUTCOME', status: 'SUCCEEDED', step_id: 'write' },
    ])
    const outcome = events.find((e) => e.type === 'run.completed')!
    for (const step of steps) expect(step.sequence).toBeLessThan(outcome.sequence)
  })

  it(`${req('RUN-039', 'RUN-030')} ends the Run EXPIRED with QUEUE_TIMEOUT when a step waits in the queue past queue_seconds`, async (ctx) => {
    const { control, workflow } = setup(ctx, 'scripts a multi-step Run on virtual time')
    const id = await scriptedRun(
      control,
      workflow,
      script(
        [
          { at: 2, step: 'step_start', id: 'first', queued_s: 100 },
          { at: 110, step: 'step_end' },
          { at: 111, step: 'step_start', id: 'second', queued_s: 200 },
          { at: 320, step: 'step_end' },
        ],
        321,
      ),
      { queue_seconds: 150 },
    )
    const at = clockFrom(control)
    // The first step waited 100 s (within 150) and ran; the second may wait 150 s from 111.
    await at(260)
    expect((await runOf(id)).status).toBe('RUNNING')
    await at(261)
    const run = await runOf(id)
    expect(run.status).toBe('EXPIRED')
    expect(run.error).toMatchObject({ code: 'QUEUE_TIMEOUT', retryable: false })
    expect(run.progress).toEqual({ total: 2, completed: 1 })
  })

  it(`${req('TIME-001', 'RUN-039')} limits the queue waits of all steps of a Run together to 3,600 seconds`, async (ctx) => {
    const { control, workflow } = setup(ctx, 'scripts a multi-step Run on virtual time')
    // Seven steps waiting 550 s each, every wait within queue_seconds 600: the seventh starts waiting at 3314
    // with 1 + 6 x 550 = 3,301 s waited already, so only 299 s are left of the whole-Run total.
    const id = await scriptedRun(control, workflow, 'queue-total', { queue_seconds: 600 })
    const at = clockFrom(control)
    await at(3612)
    const before = await runOf(id)
    expect(before.status).toBe('RUNNING')
    expect(before.progress).toEqual({ total: 7, completed: 6 })
    await at(3613)
    const run = await runOf(id)
    expect(run.status).toBe('EXPIRED')
    expect(run.error).toMatchObject({ code: 'QUEUE_TIMEOUT', retryable: false })
    expect(run.progress).toEqual({ total: 7, completed: 6 })
  })
})
