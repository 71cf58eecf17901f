/**
 * How Runs end (States and transitions; Output items; Limits): scripted scenarios on virtual time give the
 * documented terminal statuses and codes: missing required output, partial results with and without the
 * publication's permission, approval needed in the beta, deadline, queue time, budget, concurrency, FILE output.
 */
import { describe, expect, it } from 'vitest'
import { req } from '../../support/req.js'
import { publishWorkflow, readRun, startRun } from '../../support/runs.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

/** Runs one Run of the scenario to its end and returns its detail. */
async function runScenario(
  ctx: Parameters<typeof mockOnly>[0],
  scenario: string,
  overrides: Record<string, unknown> = {},
  seconds = 10,
) {
  const control = mockOnly(ctx, target, `scenario ${scenario} on virtual time`)
  const wf = role(ctx, target.world.workflows.available, 'available workflow')
  await control.queueScenario(wf, scenario)
  const { run_id } = await startRun(target, wf, overrides)
  await control.advance(seconds)
  return readRun(target, run_id)
}

describe('run outcomes', () => {
  it(`${req('STATE-016', 'ERR-010', 'ERR-011')} ends FAILED with OUTPUT_MISSING, never SUCCEEDED, when a required output is missing`, async (ctx) => {
    const { run } = await runScenario(ctx, 'missing-output')
    expect(run.status).toBe('FAILED')
    expect(run.error).toMatchObject({ code: 'OUTPUT_MISSING', retryable: false })
  })

  it(`${req('STATE-018', 'STATE-028', 'OUT-001')} ends PARTIALLY_SUCCEEDED when an optional output fails and partial results are allowed; the code stays on the item`, async (ctx) => {
    const { run, outputs } = await runScenario(ctx, 'partial')
    expect(run.status).toBe('PARTIALLY_SUCCEEDED')
    expect(run.error).toBeNull()
    const failed = outputs.filter((o) => o.error !== null)
    expect(failed).toHaveLength(1)
    expect(failed[0]!.error!.code).toBe('OUTPUT_SCHEMA_MISMATCH')
  })

  it(`${req('STATE-028', 'STATE-017')} ends FAILED with the output's code when the publication does not allow partial results`, async (ctx) => {
    mockOnly(ctx, target, 'republishing through the control API')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await publishWorkflow(target, wf, { allows_partial: false })
    const { run } = await runScenario(ctx, 'partial')
    expect(run.status).toBe('FAILED')
    expect(run.error?.code).toBe('OUTPUT_SCHEMA_MISMATCH')
  })

  it(`${req('STATE-022')} ends FAILED with ACTION_REQUIRED_UNSUPPORTED when an approval becomes necessary`, async (ctx) => {
    const { run } = await runScenario(ctx, 'needs-action')
    expect(run.status).toBe('FAILED')
    expect(run.error?.code).toBe('ACTION_REQUIRED_UNSUPPORTED')
  })

  it(`${req('STATE-014', 'ERR-096', 'STATE-015')} ends EXPIRED with RUN_DEADLINE_EXCEEDED at the whole-Run deadline`, async (ctx) => {
    const { run } = await runScenario(ctx, 'slow', { limits: { run_seconds: 30 } }, 29)
    expect(run.status).toBe('RUNNING')
    await target.control!.advance(1)
    const after = await readRun(target, run.id)
    expect(after.run.status).toBe('EXPIRED')
    expect(after.run.error?.code).toBe('RUN_DEADLINE_EXCEEDED')
    expect(after.run.completed_at).toBe(after.run.deadline)
  })

  it(`${req('BUD-002')} ends FAILED with BUDGET_EXCEEDED when the Run spends past its max_su`, async (ctx) => {
    const { run } = await runScenario(ctx, 'over-budget', { limits: { max_su: 5 } })
    expect(run.status).toBe('FAILED')
    expect(run.error?.code).toBe('BUDGET_EXCEEDED')
    expect(run.usage.status).toBe('FINAL')
    expect(run.usage.total_su).toBeLessThanOrEqual(5)
  })

  it(`${req('OUT-007', 'OUT-001')} gives a FILE output with artifact_id, filename, mime_type, size_bytes and sha256`, async (ctx) => {
    const { run, outputs } = await runScenario(ctx, 'file-output')
    expect(run.status).toBe('SUCCEEDED')
    const file = outputs.find((o) => o.type === 'FILE')
    expect(file).toMatchObject({
      artifact_id: expect.any(String),
      filename: expect.any(String),
      mime_type: expect.any(String),
      size_bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    const detail = await target.api.get(`/v1/artifacts/${file!.artifact_id as string}`, {
      key: target.world.keys.full,
    })
    expect(detail.status).toBe(200)
  })

  it(`${req('CONC-001', 'STATE-006')} runs 2 executions per Project; a third waits QUEUED and expires with QUEUE_TIMEOUT`, async (ctx) => {
    const control = mockOnly(ctx, target, 'scripted executions on virtual time')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await control.queueScenario(wf, 'slow', 3)
    const a = await startRun(target, wf)
    const b = await startRun(target, wf)
    const c = await startRun(target, wf, { limits: { queue_seconds: 20 } })
    await control.advance(5)
    expect((await readRun(target, a.run_id)).run.status).toBe('RUNNING')
    expect((await readRun(target, b.run_id)).run.status).toBe('RUNNING')
    expect((await readRun(target, c.run_id)).run.status).toBe('QUEUED')
    await control.advance(16)
    const { run } = await readRun(target, c.run_id)
    expect(run.status).toBe('EXPIRED')
    expect(run.error?.code).toBe('QUEUE_TIMEOUT')
  })
})
