/**
 * Question actions with the interactive-action facility (Interactive action records: ActionQuestion,
 * ActionResolveInput, ActionReceipt): on a Run through the Run resolve path, on a Turn through the assumed
 * Turn path. Mock only: the `needs-answer` scenario asks q1 (one of eur, usd) and q2 (any of emea, apac,
 * amer) at 2 s and succeeds 3 s after the answer.
 */
import { describe, expect, it, type TestContext } from 'vitest'
import {
  resolveRunAction,
  runAtAction,
  setInteractiveActions,
  setKeyScopes,
} from '../../support/actions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { readRun } from '../../support/runs.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { assumedRule, mockOnly } from '../../support/skip.js'
import { expectDocumentedFields } from '../../support/unknown-fields.js'
import { useTarget } from '../../support/use-target.js'
import { newSession, readTurn } from '../events/flow.js'

const target = useTarget()

const answers = {
  answers: [
    { question_id: 'q1', option_ids: ['eur'], text: null },
    { question_id: 'q2', option_ids: ['emea', 'apac'] },
  ],
}

/** Facility on, `needs-answer` queued for the workflow, a Run advanced to its question. */
async function askingRun(ctx: TestContext) {
  const { control, run_id, run } = await runAtAction(ctx, target, 'needs-answer')
  expect(run.status).toBe('REQUIRES_ACTION')
  return { control, run_id, action: run.required_actions![0]! }
}

describe('question actions', () => {
  it(`${req('ACT-001', 'STATE-023')} lists the questions of a question action in required_actions`, async (ctx) => {
    const { action } = await askingRun(ctx)
    expect(action.kind).toBe('QUESTION')
    expect(action.questions).toHaveLength(2)
    for (const q of action.questions!) {
      expect(q).toMatchObject({
        id: expect.any(String),
        text: expect.any(String),
        options: expect.any(Array),
        multi_select: expect.any(Boolean),
      })
      // required_actions elements are not shown by the Run schema: their fields are read against ActionQuestion.
      expectDocumentedFields(
        '#/components/schemas/ActionQuestion',
        q,
        'required_actions[].questions[]',
      )
      for (const o of q.options as Record<string, unknown>[]) {
        expect(Object.keys(o)).toEqual(expect.arrayContaining(['description', 'id', 'label']))
        expect(o.description === null || typeof o.description === 'string').toBe(true)
      }
    }
  })

  it(`${req('ACT-006', 'ACT-007')} answers every question once and resumes the Run to SUCCEEDED`, async (ctx) => {
    const { control, run_id, action } = await askingRun(ctx)
    const res = await resolveRunAction(target, run_id, action.id, answers)
    expect(res.status, res.text).toBe(202)
    expect(res.body).toMatchObject({
      action_id: action.id,
      status: 'RESOLVED',
      turn_id: null,
      run_id,
      run_status: 'RUNNING',
    })
    await control.advance(3)
    expect((await readRun(target, run_id)).run.status).toBe('SUCCEEDED')
  })

  it(`${req('ACT-005')} refuses a missing, repeated or unknown answer and an unknown option with 422 INVALID_INPUT`, async (ctx) => {
    const { run_id, action } = await askingRun(ctx)
    const q1 = { question_id: 'q1', option_ids: ['eur'] }
    const q2 = { question_id: 'q2', option_ids: ['amer'] }
    for (const body of [
      { answers: [q1] },
      { answers: [q1, q1, q2] },
      { answers: [q1, q2, { question_id: 'q9', text: 'x' }] },
      { answers: [{ question_id: 'q1', option_ids: ['gbp'] }, q2] },
    ]) {
      const res = await resolveRunAction(target, run_id, action.id, body)
      expectError(res, 'INVALID_INPUT', { status: 422 })
    }
    expect((await readRun(target, run_id)).run.status).toBe('REQUIRES_ACTION')
  })

  it(`${req('ACT-002', 'ACT-003', 'ACT-004')} refuses a malformed ActionResolveInput with INVALID_INPUT`, async (ctx) => {
    const { run_id, action } = await askingRun(ctx)
    for (const body of [
      { ...answers, extra: true },
      { answers: [] },
      { answers: Array.from({ length: 5 }, (_, i) => ({ question_id: `q${i}`, text: 'x' })) },
      { answers: [{ question_id: 'q'.repeat(17), text: 'x' }] },
      { answers: [{ question_id: 'q1', text: '' }] },
    ]) {
      const res = await resolveRunAction(target, run_id, action.id, body)
      expectError(res, 'INVALID_INPUT')
    }
  })

  it(`${req('ERR-078')} refuses a second answer with another key: the Run no longer waits (409 ACTION_CANCELED)`, async (ctx) => {
    const { run_id, action } = await askingRun(ctx)
    const idem = newIdempotencyKey('answer')
    const first = await resolveRunAction(target, run_id, action.id, answers, { idem })
    expect(first.status, first.text).toBe(202)
    const replay = await resolveRunAction(target, run_id, action.id, answers, { idem })
    expect(replay.body).toEqual(first.body)
    expectError(await resolveRunAction(target, run_id, action.id, answers), 'ACTION_CANCELED')
  })

  it(`${req('ACT-023')} answers a question with actions:resolve alone, never an approval`, async (ctx) => {
    const { run_id, action } = await askingRun(ctx)
    // workflows:run stays: withdrawing it would cancel the Run (STATE-019).
    await setKeyScopes(target, target.world.keys.full, [
      'runs:read',
      'workflows:run',
      'actions:resolve',
    ])
    const approvalBody = {
      decision: 'APPROVE',
      content_hash: 'a'.repeat(64),
      actor: { subject: 'p-1' },
    }
    expectError(
      await resolveRunAction(target, run_id, action.id, approvalBody),
      'ACTION_NOT_RESOLVABLE_BY_CALLER',
    )
    const res = await resolveRunAction(target, run_id, action.id, answers)
    expect(res.status, res.text).toBe(202)
  })

  it(`${req('ACT-024')} refuses answers to a question from a key without actions:resolve (actions:approve is not enough) with INSUFFICIENT_SCOPE`, async (ctx) => {
    const { run_id, action } = await askingRun(ctx)
    await setKeyScopes(target, target.world.keys.full, [
      'runs:read',
      'workflows:run',
      'actions:approve',
    ])
    expectError(await resolveRunAction(target, run_id, action.id, answers), 'INSUFFICIENT_SCOPE')
    expect((await readRun(target, run_id)).run.status).toBe('REQUIRES_ACTION')
  })

  it(`${req('ACT-006', 'ACT-007', 'STATE-023')} answers a Turn's question on the assumed Turn path`, async (ctx) => {
    const control = mockOnly(ctx, target, 'switches the facility on and moves virtual time')
    assumedRule(ctx, target, 'the Turn resolve path and the turn.action_required item')
    await setInteractiveActions(target, target.world.projectId, true)
    await control.queueScenario(target.world.deployments.active, 'needs-answer')
    const { session_id, turn_id } = await newSession(target)
    await control.advance(2)
    expect((await readTurn(target, session_id, turn_id)).status).toBe('REQUIRES_ACTION')
    const items = await target.api.get(`/v1/sessions/${session_id}/items`, {
      key: target.world.keys.full,
    })
    expect(items.status, items.text).toBe(200)
    const item = (
      items.body as { items: { content: { kind: string; action?: { id: string } } }[] }
    ).items.find((i) => i.content.kind === 'REQUIRED_ACTION')
    const actionId = item?.content.action?.id
    expect(actionId, items.text).toBeDefined()
    const path = `/v1/sessions/${session_id}/turns/${turn_id}/actions/${actionId}/resolve`
    const wrong = await target.api.post(
      path,
      { answers: [answers.answers[0]] },
      {
        key: target.world.keys.full,
        idem: newIdempotencyKey('answer'),
      },
    )
    expectError(wrong, 'INVALID_INPUT', { status: 422 })
    const res = await target.api.post(path, answers, {
      key: target.world.keys.full,
      idem: newIdempotencyKey('answer'),
    })
    expect(res.status, res.text).toBe(202)
    expect(res.body).toMatchObject({
      action_id: actionId,
      status: 'RESOLVED',
      session_id,
      turn_id,
      turn_status: 'RUNNING',
      status_url: `/v1/sessions/${session_id}/turns/${turn_id}`,
    })
    await control.advance(3)
    expect((await readTurn(target, session_id, turn_id)).status).toBe('SUCCEEDED')
  })
})
