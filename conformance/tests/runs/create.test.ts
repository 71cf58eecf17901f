/**
 * POST /v1/workflows/{workflow_id}/runs (Endpoints > Workflows and Runs, Run request rules 1-4; States rule 3;
 * Limits): the 202 receipt, scope, body and input checks, limits ranges, unavailable and republished
 * workflows, the beta's refusal of approval-gated workflows, idempotent re-sends and file binding.
 */
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import {
  MOCK_APPROVAL_WORKFLOW,
  postRun,
  publishWorkflow,
  readRun,
  readWorkflow,
  validRunBody,
  type RunReceipt,
} from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { helloTxt, upload } from '../../support/uploads.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A nested object of the given depth ({} is depth 1). */
const nested = (depth: number): Record<string, unknown> => {
  let v: Record<string, unknown> = {}
  for (let i = 1; i < depth; i++) v = { n: v }
  return v
}

describe('run creation', () => {
  it(`${req('RUN-014', 'STATE-005', 'RUN-004', 'RUN-006')} answers 202 {run_id, status_url, events_url, idempotency_expires_at}; the Run is QUEUED with its version and metadata`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const body = await validRunBody(target, wf, { metadata: { order: 'A-1042' } })
    const res = await postRun(target, wf, body)
    expect(res.status).toBe(202)
    const receipt = res.body as RunReceipt
    expect(receipt.run_id).toMatch(UUID)
    expect(receipt.status_url).toBe(`/v1/runs/${receipt.run_id}`)
    expect(receipt.events_url).toBe(`/v1/runs/${receipt.run_id}/events`)
    expect(Date.parse(receipt.idempotency_expires_at)).not.toBeNaN()
    const { run } = await readRun(target, receipt.run_id)
    expect(run.id).toBe(receipt.run_id)
    expect(run.workflow_id).toBe(wf)
    expect(run.published_version).toBe(body.published_version)
    expect(run.metadata).toEqual({ order: 'A-1042' })
    if (target.control) expect(run.status).toBe('QUEUED')
  })

  it(`${req('RUN-012', 'AUTH-004')} answers INSUFFICIENT_SCOPE to a key without workflows:run`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const key = role(ctx, target.world.keys.readOnly, 'read-only key')
    expectError(
      await postRun(target, wf, await validRunBody(target, wf), { key }),
      'INSUFFICIENT_SCOPE',
    )
  })

  it(`${req('RUN-013', 'RUN-025')} answers INVALID_INPUT without published_version or with an undeclared field`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const { published_version: _omit, ...body } = await validRunBody(target, wf)
    expectError(await postRun(target, wf, body), 'INVALID_INPUT')
    expectError(
      await postRun(target, wf, await validRunBody(target, wf, { surprise: true })),
      'INVALID_INPUT',
    )
    expectError(
      await postRun(target, wf, await validRunBody(target, wf, { published_version: 'one' })),
      'INVALID_INPUT',
    )
  })

  it(`${req('RUN-024', 'ERR-049')} answers 422 OUTPUT_SCHEMA_MISMATCH when input does not satisfy input_schema`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const w = await readWorkflow(target, wf)
    if (!Array.isArray(w.input_schema.required) || w.input_schema.required.length === 0)
      ctx.skip('the workflow input_schema requires no property')
    const res = await postRun(target, wf, { published_version: w.published_version, input: {} })
    expectError(res, 'OUTPUT_SCHEMA_MISMATCH')
  })

  it(`${req('RUN-026', 'ERR-051')} answers 422 OUTPUT_LIMIT_EXCEEDED for input deeper than 16 levels, accepts 16`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const deep = await validRunBody(target, wf)
    // The input object itself is level 1: 16 more levels make 17.
    deep.input = { ...(deep.input as object), extra: nested(16) }
    expectError(await postRun(target, wf, deep), 'OUTPUT_LIMIT_EXCEEDED')
  })

  it(`${req('RUN-027', 'ERR-051')} answers 422 OUTPUT_LIMIT_EXCEEDED for more than 10,000 array elements in total`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const body = await validRunBody(target, wf)
    body.input = {
      ...(body.input as object),
      a: new Array<number>(5000).fill(0),
      b: new Array<number>(5001).fill(0),
    }
    expectError(await postRun(target, wf, body), 'OUTPUT_LIMIT_EXCEEDED')
  })

  it(`${req('RUN-028', 'RUN-029', 'RUN-030', 'RUN-031', 'RUN-032', 'SIZE-015')} answers 422 LIMIT_OUT_OF_RANGE for each Run limit above its cap`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const over = {
      run_seconds: 43_201,
      execution_seconds: 3601,
      queue_seconds: 601,
      max_su: 100.5,
      retention_days: 31,
    }
    for (const [name, value] of Object.entries(over)) {
      const res = await postRun(
        target,
        wf,
        await validRunBody(target, wf, { limits: { [name]: value } }),
      )
      expectError(res, 'LIMIT_OUT_OF_RANGE')
    }
  })

  it(`${req('RUN-028', 'RUN-029', 'RUN-030', 'RUN-031', 'RUN-032')} accepts every Run limit at its cap`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const limits = {
      run_seconds: 43_200,
      execution_seconds: 3600,
      queue_seconds: 600,
      max_su: 100,
      retention_days: 30,
    }
    const res = await postRun(target, wf, await validRunBody(target, wf, { limits }))
    expect(res.status).toBe(202)
  })

  it(`${req('RUN-034', 'ERR-074')} answers 409 WORKFLOW_UNAVAILABLE for a workflow that is not available`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.unavailable, 'unavailable workflow')
    const w = await readWorkflow(target, wf)
    const res = await postRun(target, wf, { published_version: w.published_version, input: {} })
    expectError(res, 'WORKFLOW_UNAVAILABLE')
  })

  it(`${req('STATE-026')} refuses a published_version that differs from the current one (assumed: 422 INVALID_INPUT, reason PUBLISHED_VERSION_MISMATCH, the current version in details)`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const body = await validRunBody(target, wf)
    const res = await postRun(target, wf, {
      ...body,
      published_version: (body.published_version as number) + 1,
    })
    expect(res.status).toBeGreaterThanOrEqual(400)
    if (target.control) {
      // Re-read the workflow, not wait: INVALID_INPUT (WORKFLOW_UNAVAILABLE's next step is to wait).
      expectError(res, 'INVALID_INPUT', {
        status: 422,
        details: {
          reason: 'PUBLISHED_VERSION_MISMATCH',
          published_version: body.published_version,
        },
      })
    }
  })

  it(`${req('SVC-009')} refuses with 422 a workflow known at acceptance to need a human approval`, async (ctx) => {
    mockOnly(ctx, target, 'the approval-gated fixture workflow')
    const body = await validRunBody(target, MOCK_APPROVAL_WORKFLOW)
    const res = await postRun(target, MOCK_APPROVAL_WORKFLOW, body)
    expect(res.status).toBe(422)
    expectError(res, 'INVALID_INPUT', { details: { reason: 'ACTION_REQUIRED' } })
  })

  it(`${req('IDEM-005', 'IDEM-007')} returns the original run_id for the same key and body; another body is IDEMPOTENCY_CONFLICT`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-004')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const idem = newIdempotencyKey('run')
    const body = await validRunBody(target, wf)
    const first = await postRun(target, wf, body, { idem })
    const again = await postRun(target, wf, body, { idem })
    expect(first.status).toBe(202)
    expect(again.status).toBe(202)
    expect((again.body as RunReceipt).run_id).toBe((first.body as RunReceipt).run_id)
    const other = await postRun(target, wf, { ...body, metadata: { changed: 'yes' } }, { idem })
    expectError(other, 'IDEMPOTENCY_CONFLICT')
  })

  it(`${req('IDEM-006', 'RUN-033', 'RUN-004')} keeps accepted Runs and re-sends on their version after republishing`, async (ctx) => {
    mockOnly(ctx, target, 'republishing through the control API')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const idem = newIdempotencyKey('run')
    const body = await validRunBody(target, wf)
    const first = (await postRun(target, wf, body, { idem })).body as RunReceipt
    const before = await readRun(target, first.run_id)
    const published = await publishWorkflow(target, wf, { steps: before.run.progress.total + 4 })
    expect(published.published_version).toBe((body.published_version as number) + 1)
    const again = await postRun(target, wf, body, { idem })
    expect(again.status).toBe(202)
    expect((again.body as RunReceipt).run_id).toBe(first.run_id)
    const after = await readRun(target, first.run_id)
    expect(after.run.published_version).toBe(body.published_version)
    expect(after.run.progress.total).toBe(before.run.progress.total)
    // A new key with the old version is refused (STATE-026, assumed 422); with the new version it is accepted.
    expectError(await postRun(target, wf, body), 'INVALID_INPUT', {
      status: 422,
      details: { reason: 'PUBLISHED_VERSION_MISMATCH' },
    })
    const fresh = await postRun(target, wf, {
      ...body,
      published_version: published.published_version,
    })
    expect(fresh.status).toBe(202)
    const run = await readRun(target, (fresh.body as RunReceipt).run_id)
    expect(run.run.progress.total).toBe(before.run.progress.total + 4)
  })

  it(`${req('FILE-009')} binds a file given in file_ids to the Run; another Run cannot use it`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const up = await upload(target, helloTxt())
    expect(up.status).toBe(201)
    const fileId = (up.body as { file_id: string }).file_id
    const res = await postRun(target, wf, await validRunBody(target, wf, { file_ids: [fileId] }))
    expect(res.status).toBe(202)
    const second = await postRun(target, wf, await validRunBody(target, wf, { file_ids: [fileId] }))
    expect(second.status).toBeGreaterThanOrEqual(400)
    expect(second.status).toBeLessThan(500)
    // Assumed code (the document names none): the content is not gone, so not 410 FILE_EXPIRED.
    if (target.control)
      expectError(second, 'INVALID_INPUT', {
        status: 422,
        details: { file_id: fileId, reason: 'BOUND_TO_ANOTHER_EXECUTION' },
      })
  })

  it(`${req('SIZE-008', 'ERR-053')} refuses more than 20 file_ids or a file listed twice with 422 TOO_MANY_FILES`, async (ctx) => {
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const up = await upload(target, helloTxt())
    expect(up.status).toBe(201)
    const fileId = (up.body as { file_id: string }).file_id
    const twice = await validRunBody(target, wf, { file_ids: [fileId, fileId] })
    expectError(await postRun(target, wf, twice), 'TOO_MANY_FILES')
    const many = Array.from(
      { length: 21 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    )
    const tooMany = await validRunBody(target, wf, { file_ids: many })
    expectError(await postRun(target, wf, tooMany), 'TOO_MANY_FILES')
    // Neither refusal bound the file: a Run may still use it once.
    const once = await postRun(target, wf, await validRunBody(target, wf, { file_ids: [fileId] }))
    expect(once.status).toBe(202)
  })
})
