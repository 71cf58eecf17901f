/**
 * Workflows that read or write organization data (Workflows and Runs, Run request rules 4-5; Errors
 * WORKFLOW_DATA_DENIED, SOURCE_UNAVAILABLE): a workflow whose steps go beyond the scope declared at publication
 * is refused with 403 WORKFLOW_DATA_DENIED; while the organization data store that checks Run input is
 * unreachable a Run request is 503 SOURCE_UNAVAILABLE (retryable) and no Run is created. The refusal runs on
 * any target whose world names such a workflow (`workflows.dataDenied`); making the store unreachable needs the
 * mock's control API.
 */
import { describe, expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { postRun, readRun, validRunBody, type RunReceipt } from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { probesClientRule } from '../../support/probes.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

describe('organization data of workflows', () => {
  it(`${req('RUN-036', 'ERR-031', 'RETRY-005')} refuses a workflow that uses data beyond its publication grant with 403 WORKFLOW_DATA_DENIED, every time`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    const wf = role(ctx, target.world.workflows.dataDenied, 'workflow using data beyond its grant')
    const body = await validRunBody(target, wf)
    const idem = newIdempotencyKey('data-denied')
    expectError(await postRun(target, wf, body, { idem }), 'WORKFLOW_DATA_DENIED')
    // Not retryable, and nothing was accepted: the same request with the same key is refused again.
    expectError(await postRun(target, wf, body, { idem }), 'WORKFLOW_DATA_DENIED')
  })

  it(`${req('RUN-036')} refuses a workflow once its grant no longer covers what its steps use, and accepts it again when it does`, async (ctx) => {
    const control = mockOnly(ctx, target, 'narrows the publication grant')
    const wf = role(
      ctx,
      target.world.workflows.organizationData,
      'workflow using organization data',
    )
    const body = await validRunBody(target, wf)
    await control.setOrganizationData(wf, { grant: [] })
    expectError(await postRun(target, wf, body), 'WORKFLOW_DATA_DENIED')
    await control.setOrganizationData(wf, { grant: ['crm.accounts:READ', 'crm.accounts:WRITE'] })
    expect((await postRun(target, wf, body)).status).toBe(202)
  })

  it(`${req('RUN-035', 'ERR-085', 'ERR-009')} answers 503 SOURCE_UNAVAILABLE with Retry-After while the data store is unreachable, creates no Run, and accepts the same request once it answers`, async (ctx) => {
    const control = mockOnly(ctx, target, 'makes the organization data store unreachable')
    const wf = role(
      ctx,
      target.world.workflows.organizationData,
      'workflow using organization data',
    )
    const body = await validRunBody(target, wf)
    const idem = newIdempotencyKey('source')
    const before = await control.budget(target.world.projectId)
    await control.setOrganizationData(wf, { source_reachable: false })
    const refused = await postRun(target, wf, body, { idem })
    expectError(refused, 'SOURCE_UNAVAILABLE')
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    // No Run: nothing was admitted or reserved, and the key holds no receipt.
    expect((await control.budget(target.world.projectId)).daily.reserved_su).toBe(
      before.daily.reserved_su,
    )
    await control.setOrganizationData(wf, { source_reachable: true })
    await control.advance(retryAfter)
    const accepted = await postRun(target, wf, body, { idem })
    expect(accepted.status, accepted.text).toBe(202)
    expect(accepted.headers['idempotent-replayed']).toBeUndefined()
    const { run } = await readRun(target, (accepted.body as RunReceipt).run_id)
    expect(run.workflow_id).toBe(wf)
  })

  it(`${req('RUN-035')} leaves a workflow that reads no organization data untouched by the data store`, async (ctx) => {
    mockOnly(ctx, target, 'makes the organization data store unreachable')
    const withData = role(
      ctx,
      target.world.workflows.organizationData,
      'workflow using organization data',
    )
    const plain = role(ctx, target.world.workflows.available, 'available workflow')
    if (plain === withData)
      ctx.skip('the available workflow is the one that uses organization data')
    await target.control!.setOrganizationData(withData, { source_reachable: false })
    expect((await postRun(target, plain, await validRunBody(target, plain))).status).toBe(202)
  })
})
