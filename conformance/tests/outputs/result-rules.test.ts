/**
 * Results and the public result rules (Output items; States and transitions, result-rule rows; Limits > Sizes
 * and counts, Time limits; Retention; Data handling): large results delivered as files, limits closed as
 * failures, URL, path, name, type and contract checks, file preparation, expiry and masking. Scripted with the
 * mock's result-rule scenarios on virtual time, so every test here is mock-only.
 */
import { describe, expect, it, type TestContext } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { publishWorkflow, readRun, startRun, type OutputView } from '../../support/runs.js'
import { createSession, newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { unknownFields } from '../../support/unknown-fields.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

type Turn = {
  id: string
  session_id: string
  status: string
  error: { code: string; retryable: boolean } | null
  outputs: OutputView[]
}
type Receipt = { session_id: string; turn_id: string; status_url: string }

const DAY_S = 24 * 60 * 60
const input = { input: [{ type: 'TEXT', text: 'Write the report' }] }

const readTurn = async (r: { status_url: string }): Promise<Turn> => {
  const res = await target.api.get(r.status_url, { key: target.world.keys.full })
  expect(res.status, res.text).toBe(200)
  return res.body as Turn
}

/** Starts a Turn of the scenario on the first ACTIVE Deployment and advances the clock `seconds`. */
async function turnOf(ctx: TestContext, scenario: string, seconds = 10) {
  const control = mockOnly(ctx, target, `scenario ${scenario} on virtual time`)
  await control.queueScenario(target.world.deployments.active, scenario)
  const res = await createSession(target, input)
  expect(res.status, res.text).toBe(202)
  const receipt = res.body as Receipt
  await control.advance(seconds)
  return { receipt, turn: await readTurn(receipt), control }
}

/** Starts a Run of the scenario on the available Workflow and advances the clock `seconds`. */
async function runOf(ctx: TestContext, scenario: string, seconds = 10) {
  const control = mockOnly(ctx, target, `scenario ${scenario} on virtual time`)
  const wf = role(ctx, target.world.workflows.available, 'available workflow')
  await control.queueScenario(wf, scenario)
  const { run_id } = await startRun(target, wf)
  await control.advance(seconds)
  return { ...(await readRun(target, run_id)), control, run_id, wf }
}

const artifact = (id: unknown) =>
  target.api.get(`/v1/artifacts/${String(id)}`, { key: target.world.keys.full })

describe('result rules', () => {
  it(`${req('SIZE-004', 'OUT-005', 'SIZE-015')} delivers a TEXT result over 64 KiB as a file of the whole text, never truncated`, async (ctx) => {
    const { turn } = await turnOf(ctx, 'large-text')
    expect(turn.status).toBe('SUCCEEDED')
    const text = turn.outputs.find((o) => o.type === 'TEXT')!
    expect(text.text).toBeUndefined()
    expect(text).toMatchObject({ availability: 'READY', error: null, size_bytes: 70_000 })
    const detail = await artifact(text.artifact_id)
    expect(detail.status, detail.text).toBe(200)
    expect((detail.body as { size_bytes: number }).size_bytes).toBe(70_000)
    // Every field the mock sends is declared in spec/openapi.yaml (x-assumed where the document is silent).
    expect(unknownFields('#/components/schemas/TextOutput', text)).toEqual([])
  })

  it(`${req('SIZE-005', 'OUT-006')} delivers a JSON result over 100 array elements as a file with artifact_id, mime_type and size_bytes`, async (ctx) => {
    const { turn } = await turnOf(ctx, 'large-json')
    expect(turn.status).toBe('SUCCEEDED')
    const json = turn.outputs.find((o) => o.type === 'JSON')!
    expect(json.data).toBeUndefined()
    expect(json).toMatchObject({
      artifact_id: expect.any(String),
      mime_type: 'application/json',
      size_bytes: expect.any(Number),
      schema_ref: expect.any(String),
    })
    expect((await artifact(json.artifact_id)).status).toBe(200)
  })

  const FAILURES: [scenario: string, code: string, id: string][] = [
    ['json-over-limit', 'OUTPUT_LIMIT_EXCEEDED', 'SIZE-006'],
    ['deep-json', 'OUTPUT_LIMIT_EXCEEDED', 'SIZE-006'],
    ['file-too-large', 'OUTPUT_LIMIT_EXCEEDED', 'SIZE-011'],
    ['too-many-files', 'OUTPUT_LIMIT_EXCEEDED', 'SIZE-011'],
    ['bad-url', 'OUTPUT_URL_INVALID', 'ERR-103'],
    ['denied-path', 'OUTPUT_PATH_DENIED', 'ERR-105'],
    ['bad-filename', 'INVALID_FILENAME', 'ERR-046'],
    ['bad-file-type', 'UNSUPPORTED_FILE_TYPE', 'ERR-048'],
    ['schema-mismatch', 'OUTPUT_SCHEMA_MISMATCH', 'ERR-050'],
    ['credential-leak', 'OUTPUT_CONTAINS_CREDENTIALS', 'ERR-104'],
  ]
  for (const [scenario, code, id] of FAILURES) {
    it(`${req('STATE-017', 'ERR-052', id)} ends a Turn of ${scenario} FAILED with ${code}, retryable false, never truncated`, async (ctx) => {
      const { turn } = await turnOf(ctx, scenario)
      expect(turn.status).toBe('FAILED')
      expect(turn.error).toMatchObject({ code, retryable: false })
    })
  }

  it(`${req('SIZE-012', 'ERR-052')} ends an execution whose results take its files past 100 MiB FAILED with OUTPUT_LIMIT_EXCEEDED (RUN_STORAGE_LIMIT is the 413 of uploads)`, async (ctx) => {
    const { turn } = await turnOf(ctx, 'storage-limit')
    expect(turn.status).toBe('FAILED')
    expect(turn.error).toMatchObject({ code: 'OUTPUT_LIMIT_EXCEEDED', retryable: false })
  })

  it(`${req('STATE-017', 'ERR-050')} ends a Run FAILED with OUTPUT_SCHEMA_MISMATCH when a required JSON result breaks the contract's schema`, async (ctx) => {
    mockOnly(ctx, target, 'republishing a contract through the control API')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    const summary = { key: 'summary', type: 'JSON', required: true }
    await publishWorkflow(target, wf, {
      outputs: [{ ...summary, schema: { type: 'object', required: ['total'] } }],
    })
    const failed = await runOf(ctx, 'json-output')
    expect(failed.run.status).toBe('FAILED')
    expect(failed.run.error).toMatchObject({ code: 'OUTPUT_SCHEMA_MISMATCH', retryable: false })
    await publishWorkflow(target, wf, {
      outputs: [{ ...summary, schema: { type: 'object', required: ['status'] } }],
    })
    expect((await runOf(ctx, 'json-output')).run.status).toBe('SUCCEEDED')
  })

  it(`${req('STATE-017', 'STATE-028', 'OUT-001')} ends a Run PARTIALLY_SUCCEEDED when an optional URL result breaks a rule and partial results are allowed`, async (ctx) => {
    const { run, outputs } = await runOf(ctx, 'partial-bad-url')
    expect(run.status).toBe('PARTIALLY_SUCCEEDED')
    expect(run.error).toBeNull()
    const failed = outputs.filter((o) => o.error !== null)
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({ type: 'URL', error: { code: 'OUTPUT_URL_INVALID' } })
    expect(failed[0]!.url).toBeUndefined()
  })

  it(`${req('STATE-028', 'STATE-017')} ends that Run FAILED with the item's code when the publication does not allow partial results`, async (ctx) => {
    mockOnly(ctx, target, 'republishing through the control API')
    const wf = role(ctx, target.world.workflows.available, 'available workflow')
    await publishWorkflow(target, wf, { allows_partial: false })
    const { run } = await runOf(ctx, 'partial-bad-url')
    expect(run.status).toBe('FAILED')
    expect(run.error?.code).toBe('OUTPUT_URL_INVALID')
  })

  it(`${req('TIME-002', 'ERR-087')} answers 409 ARTIFACT_NOT_READY while a result file is prepared, and serves it once its preparation ends`, async (ctx) => {
    const { receipt, turn, control } = await turnOf(ctx, 'prepared-file', 64)
    expect(turn.status).toBe('RUNNING')
    // Assumed: the FILE item is listed while its file is prepared; its file is not ready yet.
    const preparing = turn.outputs.find((o) => o.type === 'FILE')!
    expectError(await artifact(preparing.artifact_id), 'ARTIFACT_NOT_READY')
    const download = await target.api.post(
      `/v1/artifacts/${String(preparing.artifact_id)}/download`,
      undefined,
      { key: target.world.keys.full },
    )
    expectError(download, 'ARTIFACT_NOT_READY')
    await control.advance(1)
    const done = await readTurn(receipt)
    expect(done.status).toBe('SUCCEEDED')
    const file = done.outputs.find((o) => o.type === 'FILE')!
    expect(file.artifact_id).toBe(preparing.artifact_id)
    expect((await artifact(file.artifact_id)).status).toBe(200)
  })

  it(`${req('TIME-002', 'ERR-101')} fails a Turn with ARTIFACT_PREPARATION_TIMEOUT 300 s after its end when a file is not ready`, async (ctx) => {
    const { receipt, turn, control } = await turnOf(ctx, 'slow-file', 304)
    expect(turn.status).toBe('RUNNING')
    await control.advance(1)
    const failed = await readTurn(receipt)
    expect(failed.status).toBe('FAILED')
    expect(failed.error).toMatchObject({ code: 'ARTIFACT_PREPARATION_TIMEOUT', retryable: false })
  })

  it(`${req('STATE-016', 'ERR-101', 'ERR-102')} ends a Run FAILED, never SUCCEEDED, when result file preparation fails or times out`, async (ctx) => {
    const broken = await runOf(ctx, 'broken-file')
    expect(broken.run.status).toBe('FAILED')
    expect(broken.run.error?.code).toBe('ARTIFACT_PREPARATION_FAILED')
    const slow = await runOf(ctx, 'slow-file', 310)
    expect(slow.run.status).toBe('FAILED')
    expect(slow.run.error?.code).toBe('ARTIFACT_PREPARATION_TIMEOUT')
  })

  it(`${req('OUT-004', 'ERR-055', 'RET-007')} shows a result file past its retention as availability EXPIRED with ARTIFACT_EXPIRED`, async (ctx) => {
    const { receipt, turn, control } = await turnOf(ctx, 'file-output')
    expect(turn.outputs.find((o) => o.type === 'FILE')).toMatchObject({ availability: 'READY' })
    // Keep the Session in use (its idle retention) while the file's own 30 days pass.
    await control.advance(20 * DAY_S)
    const more = await target.api.post(`/v1/sessions/${receipt.session_id}/turns`, input, {
      key: target.world.keys.full,
      idem: newIdempotencyKey(),
    })
    expect(more.status, more.text).toBe(202)
    await control.advance(10 * DAY_S + 60)
    const file = (await readTurn(receipt)).outputs.find((o) => o.type === 'FILE')!
    expect(file).toMatchObject({
      availability: 'EXPIRED',
      error: { code: 'ARTIFACT_EXPIRED', retryable: false },
    })
  })

  it(`${req('DATA-002')} masks contact details in a TEXT result and in the Session's public messages`, async (ctx) => {
    const { receipt, turn } = await turnOf(ctx, 'contact-details')
    expect(turn.status).toBe('SUCCEEDED')
    const text = String(turn.outputs.find((o) => o.type === 'TEXT')!.text)
    expect(text).not.toContain('jane.doe@example.com')
    expect(text).not.toContain('555 0100')
    expect(text).toContain('Call Jane')
    const items = await target.api.get(`/v1/sessions/${receipt.session_id}/items`, {
      key: target.world.keys.full,
    })
    expect(items.status, items.text).toBe(200)
    expect(items.text).not.toContain('jane.doe@example.com')
    expect(items.text).not.toContain('555 0100')
  })
})
