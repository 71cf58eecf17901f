import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  newPreparation,
  observe,
  parseWorkInput,
  plannedQuestions,
  PREPARATION_DEADLINE_MS,
  QUESTIONS_READY_MS,
  SCOPE_QUESTION_ID,
  transition,
  type PreparationEvent,
  type PreparationState,
  type Transition,
} from './preparation.js'

const T0 = Date.parse('2026-11-02T09:00:00Z')
const DIGEST = 'a'.repeat(64)
const OTHER = 'b'.repeat(64)
const actor = { subject: 'employee-1' }

function waiting(checklist?: string[]): PreparationState {
  const work = {
    title: 'Monthly report',
    description: 'Prepare it.',
    ...(checklist ? { checklist } : {}),
  }
  return observe(newPreparation(plannedQuestions(work), DIGEST, T0), T0 + QUESTIONS_READY_MS)
}

const answer = (
  s: PreparationState,
  answers: unknown[],
  extra: Partial<Extract<PreparationEvent, { type: 'answer' }>> = {},
): Transition =>
  transition(s, {
    type: 'answer',
    at: T0 + 10_000,
    expectedRevision: s.revision,
    answers,
    actor: null,
    canApprove: true,
    ...extra,
  })

const ok = (t: Transition): PreparationState => {
  if (!t.ok) throw new Error(`refused: ${t.error.code} ${JSON.stringify(t.error.details)}`)
  return t.state
}
const code = (t: Transition) => (t.ok ? 'OK' : t.error.code)
const reason = (t: Transition) => (t.ok ? undefined : t.error.details.reason)

const toConfirmation = () =>
  ok(
    answer(waiting(), [
      { question_id: 'q1', text: 'Finance' },
      { question_id: 'q2', option_ids: ['monthly'] },
    ]),
  )

describe('preparation state machine', () => {
  it('[WORK-004] PREPARING asks its questions after 5 s (revision 2) and expires at its deadline', () => {
    const s0 = newPreparation(plannedQuestions({ title: 'T', description: 'D' }), DIGEST, T0)
    expect(observe(s0, T0 + QUESTIONS_READY_MS - 1)).toBe(s0)
    const s1 = observe(s0, T0 + QUESTIONS_READY_MS)
    expect(s1).toMatchObject({ status: 'WAITING_FOR_ANSWERS', revision: 2 })
    expect(s1.questions.every((q) => q.open)).toBe(true)
    const s2 = observe(s0, T0 + PREPARATION_DEADLINE_MS)
    expect(s2).toMatchObject({ status: 'EXPIRED', revision: 3, reason_codes: ['DEADLINE_PASSED'] })
  })

  it('[ERR-060] answers in PREPARING, after the end or after the deadline are INVALID_TRANSITION', () => {
    const s0 = newPreparation(plannedQuestions({ title: 'T', description: 'D' }), DIGEST, T0)
    expect(code(answer(s0, [{ question_id: 'q1', text: 'x' }]))).toBe('INVALID_TRANSITION')
    const expired = observe(waiting(), T0 + PREPARATION_DEADLINE_MS)
    expect(code(answer(expired, [{ question_id: 'q1', text: 'x' }]))).toBe('INVALID_TRANSITION')
  })

  it('[ERR-058] a stale expected revision is REVISION_CONFLICT', () => {
    const s = waiting()
    expect(code(answer(s, [{ question_id: 'q1', text: 'x' }], { expectedRevision: 1 }))).toBe(
      'REVISION_CONFLICT',
    )
  })

  it('[WORK-004][ERR-061] answers apply in order: a question answered twice is not open the second time', () => {
    const s = waiting()
    const t = answer(s, [
      { question_id: 'q1', text: 'a' },
      { question_id: 'q1', text: 'b' },
    ])
    expect(code(t)).toBe('QUESTION_NOT_FOUND')
    expect(!t.ok && t.error.details).toMatchObject({ question_id: 'q1', index: 1 })
  })

  it('[WORK-004] a refused request changes nothing; an accepted one adds 1 to the revision', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('q1', 'q2', 'q3', 'zz'), { minLength: 1, maxLength: 6 }),
        (ids) => {
          const s = waiting(['a', 'b', 'c'])
          const before = JSON.stringify(s)
          const t = answer(
            s,
            ids.map((id) => ({ question_id: id, text: 'x' })),
          )
          expect(JSON.stringify(s)).toBe(before)
          const valid = new Set(ids).size === ids.length && !ids.includes('zz')
          expect(t.ok).toBe(valid)
          if (t.ok) {
            expect(t.state.revision).toBe(s.revision + 1)
            expect(t.state.answers.map((a) => a.question_id)).toEqual(ids)
          }
        },
      ),
    )
  })

  it('[ERR-064] answer shapes that break a rule are INVALID_REQUEST with details.reason', () => {
    const s = waiting()
    expect(reason(answer(s, [{ question_id: 'q1' }]))).toBe('ANSWER_VALUE_INVALID')
    expect(reason(answer(s, [{ question_id: 'q1', text: 'x', extra: 1 }]))).toBe('ANSWER_MALFORMED')
    expect(reason(answer(s, [{ question_id: 'q1', option_ids: ['once'] }]))).toBe(
      'ANSWER_KIND_MISMATCH',
    )
    expect(reason(answer(s, [{ question_id: 'q2', option_ids: ['never'] }]))).toBe('OPTION_INVALID')
    expect(reason(answer(s, [{ question_id: 'q2', option_ids: ['once', 'daily'] }]))).toBe(
      'OPTION_INVALID',
    )
  })

  it('[WORK-005] answering the last question opens the scope confirmation; it is sent alone, with actor, and needs works:approve', () => {
    const s = toConfirmation()
    expect(s.status).toBe('WAITING_FOR_CONFIRMATION')
    expect(s.questions.filter((q) => q.open).map((q) => q.id)).toEqual([SCOPE_QUESTION_ID])
    const confirm = { question_id: SCOPE_QUESTION_ID, decision: 'CONFIRM', package_digest: DIGEST }
    expect(reason(answer(s, [confirm, { question_id: 'q1', text: 'x' }], { actor }))).toBe(
      'SCOPE_CONFIRMATION_NOT_ALONE',
    )
    expect(reason(answer(s, [confirm]))).toBe('ACTOR_REQUIRED')
    expect(code(answer(s, [confirm], { actor, canApprove: false }))).toBe(
      'ACTION_NOT_RESOLVABLE_BY_CALLER',
    )
    expect(ok(answer(s, [confirm], { actor }))).toMatchObject({ status: 'READY', reason_codes: [] })
    expect(ok(answer(s, [{ ...confirm, decision: 'REJECT' }], { actor }))).toMatchObject({
      status: 'FAILED',
      reason_codes: ['SCOPE_REJECTED'],
    })
  })

  it('[ERR-062] a confirmation of a setup that is no longer the candidate is PACKAGE_CHANGED', () => {
    const s = ok(
      transition(toConfirmation(), { type: 'package_changed', at: T0 + 20_000, digest: OTHER }),
    )
    const confirm = { question_id: SCOPE_QUESTION_ID, decision: 'CONFIRM', package_digest: DIGEST }
    expect(code(answer(s, [confirm], { actor }))).toBe('PACKAGE_CHANGED')
    expect(ok(answer(s, [{ ...confirm, package_digest: OTHER }], { actor })).status).toBe('READY')
  })

  it('[ERR-060] an ended preparation accepts no package change', () => {
    const expired = observe(waiting(), T0 + PREPARATION_DEADLINE_MS)
    expect(code(transition(expired, { type: 'package_changed', at: T0, digest: OTHER }))).toBe(
      'INVALID_TRANSITION',
    )
  })
})

describe('work descriptions', () => {
  it('[ERR-063] a description that breaks a rule is INVALID_SPEC with details.reason', () => {
    const r = (b: unknown) => {
      const p = parseWorkInput(b)
      return 'code' in p ? `${p.code}:${String(p.details.reason ?? p.details.field)}` : 'OK'
    }
    expect(r({ title: 'T', description: 'D' })).toBe('OK')
    expect(r({ title: ' ', description: 'D' })).toBe('INVALID_SPEC:TITLE_INVALID')
    expect(r({ title: 'T', description: '' })).toBe('INVALID_SPEC:DESCRIPTION_INVALID')
    expect(r({ title: 'T', description: 'password: hunter2hunter2' })).toBe(
      'INVALID_SPEC:DESCRIPTION_CONTAINS_CREDENTIALS',
    )
    expect(r({ title: 'T', description: 'D', checklist: [] })).toBe(
      'INVALID_SPEC:CHECKLIST_INVALID',
    )
    expect(r({ title: 'T', description: 'D', checklist: ['a', 'A'] })).toBe(
      'INVALID_SPEC:CHECKLIST_INVALID',
    )
    expect(r({ title: 'T', description: 'D', other: 1 })).toBe('INVALID_INPUT:other')
    expect(r({ title: 1, description: 'D' })).toBe('INVALID_INPUT:title')
  })

  it('[ERR-063] checklists of 1 to 20 distinct items plan one question each', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 20 }),
        (checklist) => {
          const p = parseWorkInput({ title: 'T', description: 'D', checklist })
          expect('code' in p).toBe(false)
          expect(plannedQuestions({ title: 'T', description: 'D', checklist })).toHaveLength(
            checklist.length,
          )
        },
      ),
    )
  })
})
