/**
 * GET /v1/workflows/{workflow_id} (Resources > Workflow; Endpoints > Workflows and Runs): the description with
 * published_version, input_schema, outputs, available and limits; an unavailable workflow is still a 200 with
 * error.code inside; workflows:read is needed; another Project's workflow is not revealed.
 */
import { describe, expect, it } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import type { WorkflowView } from '../../support/runs.js'
import { role } from '../../support/skip.js'
import { unknownFields } from '../../support/unknown-fields.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const read = (id: string, key = target.world.keys.full) =>
  target.api.get(`/v1/workflows/${id}`, { key })

describe('workflow read', () => {
  it(`${req('WF-001')} answers 200 with published_version, input_schema, outputs, available and limits`, async (ctx) => {
    const id = role(ctx, target.world.workflows.available, 'available workflow')
    const res = await read(id)
    expect(res.status).toBe(200)
    const w = res.body as WorkflowView
    expect(Number.isInteger(w.published_version)).toBe(true)
    for (const field of ['input_schema', 'outputs', 'limits'])
      expect(Object.keys(w), `the description has ${field}`).toContain(field)
    expect(w.available).toBe(true)
    expect(w.error ?? null).toBeNull()
    // "Structure of input_schema and of the outputs contract beyond these names: not shown."
    await mockChoice(
      target,
      'not shown: input_schema is a JSON Schema object, outputs a list, limits an object',
      () => {
        expect(typeof w.input_schema).toBe('object')
        expect(w.input_schema).not.toBeNull()
        expect(Array.isArray(w.outputs)).toBe(true)
        expect(typeof w.limits).toBe('object')
      },
    )
    // The mock declares every field it sends (id and name are x-assumed); a real deployment may add fields.
    if (target.control) expect(unknownFields('#/components/schemas/Workflow', w)).toEqual([])
  })

  it(`${req('WF-002', 'ERR-074')} answers 200 with available false and error.code for an unavailable workflow`, async (ctx) => {
    const id = role(ctx, target.world.workflows.unavailable, 'unavailable workflow')
    const res = await read(id)
    expect(res.status).toBe(200)
    const w = res.body as WorkflowView
    expect(w.available).toBe(false)
    expect(w.error?.code).toBe('WORKFLOW_UNAVAILABLE')
  })

  it(`${req('WF-003', 'AUTH-004')} answers INSUFFICIENT_SCOPE to a key without workflows:read`, async (ctx) => {
    const id = role(ctx, target.world.workflows.available, 'available workflow')
    const key = role(ctx, target.world.keys.worksOnly, 'works-only key')
    expectError(await read(id, key), 'INSUFFICIENT_SCOPE')
  })

  it(`${req('AUTH-009')} answers NOT_FOUND for another Project's workflow and for an unknown id`, async (ctx) => {
    const other = role(ctx, target.world.workflows.otherProject, "other Project's workflow")
    expectError(await read(other), 'NOT_FOUND')
    expectError(await read('00000000-0000-4000-8000-00000000dead'), 'NOT_FOUND')
  })
})
