/**
 * Organization works and preparations (What the service does; Usage and works; Authentication 3-5; Errors
 * REVISION_CONFLICT .. INVALID_REQUEST). Scopes and the answers body are the document's; the work and
 * preparation shapes, their states and questions are x-assumed (spec/openapi.yaml), so those rules run only
 * on a mock: a work named by its title, PREPARING for 5 s, then WAITING_FOR_ANSWERS with questions q1..qN,
 * then a scope confirmation question "scope" answered {decision, package_digest} with an actor.
 */
import fc from 'fast-check'
import { expect, it, type TestContext } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { retryRateLimited } from '../../support/pace.js'
import { req } from '../../support/req.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { assumedRule, mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

type Work = { id: string; revision: number; status: string; preparation_id: string }
type Preparation = {
  id: string
  work_id: string
  revision: number
  status: string
  questions: { id: string; kind: string; package_digest?: string }[]
  reason_codes: string[]
  package_digest: string
}

/** The preparation steps of the mock (x-assumed): questions are asked 5 s after creation. */
const QUESTIONS_READY_S = 5

const worksKey = () => target.world.keys.worksOnly ?? target.world.keys.full
const send = (f: () => Promise<ApiResponse>) => retryRateLimited(target, f, 10)

const postWork = (body: unknown, key = worksKey(), idem = newIdempotencyKey('work')) =>
  send(() => target.api.post('/v1/works', body, { key, idem }))
const getPrep = (id: string, key = worksKey()) =>
  send(() => target.api.get(`/v1/preparations/${id}`, { key }))
const answer = (id: string, body: unknown, key = worksKey()) =>
  send(() => target.api.post(`/v1/preparations/${id}/answers`, body, { key }))

let titles = 0
/** A work with a fresh title; its preparation, read after the questions are asked. */
async function waitingPreparation(checklist?: string[]): Promise<Preparation> {
  const res = await postWork({
    title: `Report ${++titles}`,
    description: 'Prepare the monthly sales report.',
    ...(checklist ? { checklist } : {}),
  })
  expect(res.status, res.text).toBe(201)
  await target.control!.advance(QUESTIONS_READY_S)
  const prep = await getPrep((res.body as Work).preparation_id)
  expect(prep.body).toMatchObject({ status: 'WAITING_FOR_ANSWERS' })
  return prep.body as Preparation
}

/** A preparation whose ordinary questions are answered: the scope confirmation is open. */
async function confirmationPending(): Promise<Preparation> {
  const p = await waitingPreparation(['Who reviews it'])
  const res = await answer(p.id, {
    expected_preparation_revision: p.revision,
    answers: [{ question_id: 'q1', text: 'Finance' }],
  })
  expect(res.body).toMatchObject({ status: 'WAITING_FOR_CONFIRMATION' })
  return res.body as Preparation
}

const confirm = (p: Preparation, digest = p.package_digest) => ({
  expected_preparation_revision: p.revision,
  answers: [{ question_id: 'scope', decision: 'CONFIRM', package_digest: digest }],
  actor: { subject: 'employee-4711' },
})

/** A narrower key for scope rules: the control API replaces the works-only key's scopes (mock only). */
async function keyWithScopes(ctx: TestContext, scopes: string[]): Promise<string> {
  mockOnly(ctx, target, 'replaces a key’s scopes')
  const key = role(ctx, target.world.keys.worksOnly, 'works-only key')
  const res = await target.api.post(`/_mock/keys/${key}/scopes`, { scopes }, { check: false })
  expect(res.status, res.text).toBe(200)
  return key
}

it(`${req('SVC-008', 'WORK-001', 'AUTH-004')} POST /v1/works without works:write is 403 INSUFFICIENT_SCOPE`, async (ctx) => {
  const key = role(ctx, target.world.keys.readOnly, 'read-only key')
  const res = await postWork({ title: 'T', description: 'D' }, key)
  expectError(res, 'INSUFFICIENT_SCOPE')
})

it(`${req('SVC-008', 'WORK-002')} the preparation reads without works:read are 403 INSUFFICIENT_SCOPE`, async (ctx) => {
  const key = await keyWithScopes(ctx, ['works:write', 'usage:read'])
  expectError(await target.api.get('/v1/preparations', { key }), 'INSUFFICIENT_SCOPE')
  expectError(
    await target.api.get('/v1/preparations/00000000-0000-4000-8000-000000000000', { key }),
    'INSUFFICIENT_SCOPE',
  )
})

it(`${req('SVC-008', 'AUTH-005')} a works-only key creates a work, lists and reads its preparation`, async (ctx) => {
  assumedRule(ctx, target, 'work and preparation shapes')
  role(ctx, target.world.keys.worksOnly, 'works-only key')
  const res = await postWork({ title: 'Monthly report', description: 'Prepare it.' })
  expect(res.status).toBe(201)
  const work = res.body as Work
  expect(work).toMatchObject({ revision: 1, status: 'PREPARING' })
  const first = await getPrep(work.preparation_id)
  expect(first.body).toMatchObject({ work_id: work.id, revision: 1, status: 'PREPARING' })
  expect((first.body as Preparation).questions).toEqual([])
  await target.control!.advance(QUESTIONS_READY_S)
  const list = await send(() => target.api.get('/v1/preparations', { key: worksKey() }))
  expect(list.status).toBe(200)
  expect(list.body).toMatchObject({
    items: [{ id: work.preparation_id, revision: 2, status: 'WAITING_FOR_ANSWERS' }],
    next_cursor: null,
  })
})

it(`${req('SVC-008')} preparations page with limit and after (next_cursor); a limit out of range is 422, a bad cursor 400`, async (ctx) => {
  assumedRule(ctx, target, 'preparation list paging')
  for (let i = 0; i < 3; i++) await postWork({ title: `Work ${i}`, description: 'D' })
  const key = worksKey()
  const page1 = await target.api.get('/v1/preparations', { key, query: { limit: 2 } })
  const body1 = page1.body as { items: Preparation[]; next_cursor: string | null }
  expect(body1.items).toHaveLength(2)
  expect(body1.next_cursor).toBe(body1.items[1]!.id)
  const page2 = await target.api.get('/v1/preparations', {
    key,
    query: { limit: 2, after: body1.next_cursor! },
  })
  expect(page2.body).toMatchObject({ next_cursor: null })
  expect((page2.body as { items: unknown[] }).items).toHaveLength(1)
  expectError(
    await target.api.get('/v1/preparations', { key, query: { limit: 101 } }),
    'INVALID_INPUT',
    { status: 422 },
  )
  expectError(
    await target.api.get('/v1/preparations', {
      key,
      query: { after: '00000000-0000-4000-8000-000000000000' },
    }),
    'INVALID_CURSOR',
  )
})

it(`${req('AUTH-009')} a preparation of another Project is 404 NOT_FOUND`, async (ctx) => {
  assumedRule(ctx, target, 'work shapes')
  const other = role(ctx, target.world.keys.otherProject, 'key of another Project')
  const work = (await postWork({ title: 'T', description: 'D' })).body as Work
  expectError(await getPrep(work.preparation_id, other), 'NOT_FOUND')
  expectError(
    await answer(work.preparation_id, { expected_preparation_revision: 1, answers: [{}] }, other),
    'NOT_FOUND',
  )
})

it(`${req('WORK-003')} answers holds 1 to 20 entries: 0 or 21 are 422 INVALID_INPUT, 1 to 20 are applied`, async (ctx) => {
  mockOnly(ctx, target, 'needs virtual time and a checklist of 20 questions')
  const p = await waitingPreparation(Array.from({ length: 20 }, (_, i) => `item ${i + 1}`))
  const texts = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ question_id: `q${i + 1}`, text: 'done' }))
  for (const n of [0, 21]) {
    expectError(
      await answer(p.id, { expected_preparation_revision: p.revision, answers: texts(n) }),
      'INVALID_INPUT',
      { status: 422 },
    )
  }
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 20 }), async (n) => {
      const fresh = await waitingPreparation(Array.from({ length: 20 }, (_, i) => `item ${i + 1}`))
      const res = await answer(fresh.id, {
        expected_preparation_revision: fresh.revision,
        answers: texts(n),
      })
      expect(res.status, res.text).toBe(200)
      const after = res.body as Preparation & { answers: { question_id: string }[] }
      expect(after.revision).toBe(fresh.revision + 1)
      expect(after.answers.map((a) => a.question_id)).toEqual(texts(n).map((a) => a.question_id))
      expect(after.questions).toHaveLength(n === 20 ? 1 : 20 - n)
    }),
    fcParams({ numRuns: 8 }),
  )
})

it(`${req('WORK-003')} expected_preparation_revision, actor and undeclared fields are checked (INVALID_INPUT)`, async (ctx) => {
  assumedRule(ctx, target, 'preparation ids come from a created work')
  const work = (await postWork({ title: 'T', description: 'D' })).body as Work
  const ok = { expected_preparation_revision: 1, answers: [{ question_id: 'q1', text: 'x' }] }
  for (const body of [
    { ...ok, expected_preparation_revision: 0 },
    { ...ok, expected_preparation_revision: 1.5 },
    { answers: ok.answers },
    { expected_preparation_revision: 1 },
    { ...ok, actor: { subject: '' } },
    { ...ok, actor: { subject: 'x', extra: 1 } },
    { ...ok, extra: true },
  ]) {
    expectError(await answer(work.preparation_id, body), 'INVALID_INPUT', { status: 422 })
  }
  const nullActor = await answer(work.preparation_id, { ...ok, actor: null })
  expect(nullActor.status).not.toBe(422)
})

it(`${req('WORK-004', 'ERR-061')} a refused answer applies nothing: an unknown question is 409 QUESTION_NOT_FOUND`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const p = await waitingPreparation()
  const res = await answer(p.id, {
    expected_preparation_revision: p.revision,
    answers: [
      { question_id: 'q1', text: 'Finance' },
      { question_id: 'nope', text: 'x' },
    ],
  })
  expectError(res, 'QUESTION_NOT_FOUND', { details: { question_id: 'nope', index: 1 } })
  const after = (await getPrep(p.id)).body as Preparation
  expect(after.revision).toBe(p.revision)
  expect(after.questions.map((q) => q.id)).toEqual(['q1', 'q2'])
})

it(`${req('WORK-004', 'ERR-061')} answers apply in order: the same question twice is not open the second time`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const p = await waitingPreparation()
  const twice = await answer(p.id, {
    expected_preparation_revision: p.revision,
    answers: [
      { question_id: 'q1', text: 'a' },
      { question_id: 'q1', text: 'b' },
    ],
  })
  expectError(twice, 'QUESTION_NOT_FOUND', { details: { index: 1 } })
})

it(`${req('ERR-058')} a stale expected_preparation_revision is 409 REVISION_CONFLICT`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const p = await waitingPreparation()
  const body = {
    expected_preparation_revision: p.revision,
    answers: [{ question_id: 'q1', text: 'a' }],
  }
  expect((await answer(p.id, body)).status).toBe(200)
  expectError(await answer(p.id, body), 'REVISION_CONFLICT', {
    details: { current_revision: p.revision + 1 },
  })
})

it(`${req('ERR-060')} a preparation still preparing, ended or past its deadline is 409 INVALID_TRANSITION`, async (ctx) => {
  const control = mockOnly(ctx, target, 'virtual time')
  const work = (await postWork({ title: 'T', description: 'D' })).body as Work
  const early = await answer(work.preparation_id, {
    expected_preparation_revision: 1,
    answers: [{ question_id: 'q1', text: 'a' }],
  })
  expectError(early, 'INVALID_TRANSITION', { details: { status: 'PREPARING' } })
  await control.advance(24 * 3600)
  const late = (await getPrep(work.preparation_id)).body as Preparation
  expect(late).toMatchObject({ status: 'EXPIRED', reason_codes: ['DEADLINE_PASSED'] })
  expectError(
    await answer(work.preparation_id, {
      expected_preparation_revision: late.revision,
      answers: [{ question_id: 'q1', text: 'a' }],
    }),
    'INVALID_TRANSITION',
  )
})

it(`${req('ERR-059')} creating the same work while its preparation runs is 409 PREPARATION_IN_PROGRESS`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const first = (await postWork({ title: 'Monthly Report', description: 'D' })).body as Work
  const again = await postWork({ title: '  monthly   report ', description: 'Other' })
  expectError(again, 'PREPARATION_IN_PROGRESS', {
    details: { preparation_id: first.preparation_id, work_id: first.id },
  })
  // Once the preparation has ended, the same work gets a new revision and a new preparation.
  await target.control!.advance(24 * 3600)
  const next = await postWork({ title: 'Monthly Report', description: 'D2', expected_revision: 1 })
  expect(next.status).toBe(201)
  expect(next.body).toMatchObject({ id: first.id, revision: 2, status: 'PREPARING' })
  expect((next.body as Work).preparation_id).not.toBe(first.preparation_id)
  expectError(
    await postWork({ title: 'Other', description: 'D', expected_revision: 3 }),
    'REVISION_CONFLICT',
  )
})

it(`${req('EP-006', 'ERR-041')} POST /v1/works needs an Idempotency-Key; a resend returns the same work, another body conflicts`, async (ctx) => {
  probesClientRule(ctx, 'RETRY-004')
  assumedRule(ctx, target, 'work shapes')
  expectError(
    await target.api.post('/v1/works', { title: 'T', description: 'D' }, { key: worksKey() }),
    'INVALID_IDEMPOTENCY_KEY',
  )
  const idem = newIdempotencyKey('work')
  const a = await postWork({ title: 'T', description: 'D' }, worksKey(), idem)
  const b = await postWork({ title: 'T', description: 'D' }, worksKey(), idem)
  expect(b.status).toBe(201)
  expect(b.body).toEqual(a.body)
  expectError(
    await postWork({ title: 'T2', description: 'D' }, worksKey(), idem),
    'IDEMPOTENCY_CONFLICT',
  )
})

it(`${req('ERR-063')} a work description that breaks a rule is 422 INVALID_SPEC with details.reason`, async (ctx) => {
  assumedRule(ctx, target, 'work description rules')
  const cases: [unknown, string][] = [
    [{ title: 'T', description: '   ' }, 'DESCRIPTION_INVALID'],
    [{ title: '', description: 'D' }, 'TITLE_INVALID'],
    [{ title: 'x'.repeat(201), description: 'D' }, 'TITLE_INVALID'],
    [{ title: 'T', description: 'api_key = abcdef123456' }, 'DESCRIPTION_CONTAINS_CREDENTIALS'],
    [{ title: 'T', description: 'D', checklist: [] }, 'CHECKLIST_INVALID'],
    [
      { title: 'T', description: 'D', checklist: Array.from({ length: 21 }, (_, i) => `${i}`) },
      'CHECKLIST_INVALID',
    ],
  ]
  for (const [body, reason] of cases) {
    expectError(await postWork(body), 'INVALID_SPEC', { details: { reason } })
  }
  expectError(await postWork({ title: 'T', description: 'D', owner: 'x' }), 'INVALID_INPUT', {
    status: 422,
  })
})

it(`${req('ERR-064')} an answer that breaks a rule is 422 INVALID_REQUEST with details.reason`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const p = await waitingPreparation()
  const cases: [unknown[], string][] = [
    [[{ question_id: 'q1' }], 'ANSWER_VALUE_INVALID'],
    [[{ question_id: 'q1', text: 'a', option_ids: ['once'] }], 'ANSWER_VALUE_INVALID'],
    [[{ question_id: 'q2', text: 'weekly' }], 'ANSWER_KIND_MISMATCH'],
    [[{ question_id: 'q2', option_ids: ['yearly'] }], 'OPTION_INVALID'],
    [[{ question_id: 'q1', text: 'a', color: 'red' }], 'ANSWER_MALFORMED'],
  ]
  for (const [answers, reason] of cases) {
    expectError(
      await answer(p.id, { expected_preparation_revision: p.revision, answers }),
      'INVALID_REQUEST',
      { details: { reason } },
    )
  }
  expect(((await getPrep(p.id)).body as Preparation).revision).toBe(p.revision)
})

it(`${req('WORK-005')} a scope confirmation is sent alone and with an actor (422 INVALID_REQUEST otherwise)`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const p = await confirmationPending()
  const body = confirm(p)
  expectError(
    await answer(p.id, { ...body, answers: [...body.answers, { question_id: 'q1', text: 'x' }] }),
    'INVALID_REQUEST',
    { details: { reason: 'SCOPE_CONFIRMATION_NOT_ALONE' } },
  )
  expectError(await answer(p.id, { ...body, actor: null }), 'INVALID_REQUEST', {
    details: { reason: 'ACTOR_REQUIRED' },
  })
  const done = await answer(p.id, body)
  expect(done.status).toBe(200)
  expect(done.body).toMatchObject({ status: 'READY', questions: [], revision: p.revision + 1 })
  expectError(await answer(p.id, confirm(done.body as Preparation)), 'INVALID_TRANSITION')
})

it(`${req('WORK-005', 'ERR-032')} a scope confirmation without works:approve is 403 ACTION_NOT_RESOLVABLE_BY_CALLER`, async (ctx) => {
  mockOnly(ctx, target, 'virtual time')
  const p = await confirmationPending()
  const key = await keyWithScopes(ctx, ['works:read', 'works:write'])
  expectError(await answer(p.id, confirm(p), key), 'ACTION_NOT_RESOLVABLE_BY_CALLER')
  // Nothing was applied: the confirmation is still open.
  expect(((await getPrep(p.id, key)).body as Preparation).status).toBe('WAITING_FOR_CONFIRMATION')
})

it(`${req('ERR-062')} confirming a setup that is no longer the candidate is 409 PACKAGE_CHANGED`, async (ctx) => {
  mockOnly(ctx, target, 'the control API changes the candidate')
  const p = await confirmationPending()
  const res = await target.api.post(`/_mock/preparations/${p.id}/package`, undefined, {
    check: false,
  })
  expect(res.status, res.text).toBe(200)
  const changed = res.body as Preparation
  expect(changed.package_digest).not.toBe(p.package_digest)
  expect(changed.revision).toBe(p.revision + 1)
  // The client read the new revision, but the person reviewed the old setup.
  expectError(await answer(p.id, confirm(changed, p.package_digest)), 'PACKAGE_CHANGED')
  expect((await answer(p.id, confirm(changed))).body).toMatchObject({ status: 'READY' })
})
