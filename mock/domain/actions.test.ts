import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import {
  actionSpecProblems,
  answerProblems,
  contentHash,
  decisionAllowed,
  DECISIONS,
  defaultActionSpec,
  reviewTooLarge,
  type ActionQuestion,
} from './actions.js'

const questions: ActionQuestion[] = [
  {
    id: 'q1',
    text: 'One?',
    options: [
      { id: 'a', label: 'A', description: null },
      { id: 'b', label: 'B', description: 'b' },
    ],
    multi_select: false,
  },
  {
    id: 'q2',
    text: 'Many?',
    options: [
      { id: 'x', label: 'X', description: null },
      { id: 'y', label: 'Y', description: null },
    ],
    multi_select: true,
  },
]

describe('interactive action rules', () => {
  it('[ACT-017][ACT-018] accepts only the decisions of the approval kind', () => {
    expect(DECISIONS.STAGE_HOLD).toEqual(['APPROVE', 'SKIP', 'REJECT_JOB'])
    expect(DECISIONS.RESULT_CONFIRMATION).toEqual(['CONFIRM', 'REJECT_JOB'])
    expect(decisionAllowed('STAGE_HOLD', 'CONFIRM')).toBe(false)
    expect(decisionAllowed('RESULT_CONFIRMATION', 'APPROVE')).toBe(false)
    expect(decisionAllowed('RESULT_CONFIRMATION', 'SKIP')).toBe(false)
    expect(decisionAllowed('RESULT_CONFIRMATION', 'REJECT_JOB')).toBe(true)
  })

  it('[ACT-019] hashes the canonical review material: key order does not matter, content does', () => {
    const a = contentHash({ kind: 'STAGE_HOLD', summary: 's', rows: [{ x: 1, y: 2 }] })
    const b = contentHash({ rows: [{ y: 2, x: 1 }], summary: 's', kind: 'STAGE_HOLD' })
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    expect(a).toBe(b)
    expect(contentHash({ kind: 'STAGE_HOLD', summary: 't', rows: [{ x: 1, y: 2 }] })).not.toBe(a)
    expect(contentHash({ kind: 'STAGE_HOLD' })).toBe(
      createHash('sha256').update('{"kind":"STAGE_HOLD"}').digest('hex'),
    )
  })

  test.prop([fc.dictionary(fc.string(), fc.jsonValue())])(
    '[ACT-019] gives every content one hash of 64 lowercase hex characters',
    (reason) => {
      const h = contentHash({ kind: 'RESULT_CONFIRMATION', reason })
      expect(h).toMatch(/^[0-9a-f]{64}$/)
      expect(contentHash({ kind: 'RESULT_CONFIRMATION', reason: { ...reason } })).toBe(h)
    },
  )

  it('[ERR-035] finds review material over 100 rows or 256 KiB too large', () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ i }))
    expect(reviewTooLarge({ kind: 'STAGE_HOLD', rows: rows(100) })).toBe(false)
    expect(reviewTooLarge({ kind: 'STAGE_HOLD', rows: rows(101) })).toBe(true)
    expect(reviewTooLarge({ kind: 'STAGE_HOLD', summary: 'x'.repeat(256 * 1024) })).toBe(true)
    expect(reviewTooLarge({ kind: 'STAGE_HOLD', summary: 'x'.repeat(200 * 1024) })).toBe(false)
  })

  it('[ACT-005] takes answers that answer every question exactly once', () => {
    expect(
      answerProblems(questions, [
        { question_id: 'q1', option_ids: ['a'] },
        { question_id: 'q2', option_ids: ['x', 'y'], text: null },
      ]),
    ).toEqual([])
    expect(
      answerProblems(questions, [
        { question_id: 'q1', text: 'free text' },
        { question_id: 'q2', option_ids: ['y'] },
      ]),
    ).toEqual([])
  })

  it('[ACT-005] refuses a missing, repeated or unknown question', () => {
    expect(answerProblems(questions, [{ question_id: 'q1', option_ids: ['a'] }])).toEqual([
      'question "q2" is not answered',
    ])
    expect(
      answerProblems(questions, [
        { question_id: 'q1', option_ids: ['a'] },
        { question_id: 'q1', option_ids: ['b'] },
        { question_id: 'q2', option_ids: ['x'] },
      ]).some((p) => p.includes('more than once')),
    ).toBe(true)
    expect(
      answerProblems(questions, [
        { question_id: 'q1', option_ids: ['a'] },
        { question_id: 'q2', option_ids: ['x'] },
        { question_id: 'q9', option_ids: ['x'] },
      ]).some((p) => p.includes('"q9" is not a question')),
    ).toBe(true)
  })

  it('refuses option ids of no option, twice, several for a single choice, or an empty answer', () => {
    const both = (q1: object) =>
      answerProblems(questions, [
        { question_id: 'q1', ...q1 },
        { question_id: 'q2', option_ids: ['x'] },
      ])
    expect(both({ option_ids: ['zz'] })[0]).toContain('"zz" is not an option')
    expect(both({ option_ids: ['a', 'a'] })[0]).toContain('listed twice')
    expect(both({ option_ids: ['a', 'b'] })[0]).toContain('takes one option')
    expect(both({ option_ids: [], text: null })[0]).toContain('give option_ids or a text')
  })

  test.prop([fc.shuffledSubarray(['q1', 'q2'])])(
    '[ACT-005] reports exactly the questions left unanswered',
    (answered) => {
      const problems = answerProblems(
        questions,
        answered.map((id) => ({ question_id: id, option_ids: [id === 'q1' ? 'a' : 'x'] })),
      )
      expect(problems).toEqual(
        ['q1', 'q2']
          .filter((q) => !answered.includes(q))
          .map((q) => `question "${q}" is not answered`),
      )
    },
  )

  it('checks the action of a scenario step', () => {
    expect(actionSpecProblems(defaultActionSpec('RUN'), 'a')).toEqual([])
    expect(actionSpecProblems(defaultActionSpec('TURN'), 'a')).toEqual([])
    expect(actionSpecProblems({ kind: 'APPROVAL', approval: 'MAYBE' }, 'a')).toEqual([
      'a.approval must be STAGE_HOLD or RESULT_CONFIRMATION',
    ])
    expect(actionSpecProblems({ kind: 'QUESTION', questions: [] }, 'a')).toEqual([
      'a.questions must be a list of 1 to 4 questions',
    ])
    expect(
      actionSpecProblems({ kind: 'QUESTION', questions: [questions[0], questions[0]] }, 'a'),
    ).toEqual(['a.questions[1].id "q1" is used twice'])
    expect(actionSpecProblems({ kind: 'OTHER' }, 'a')).toEqual([
      'a.kind must be APPROVAL or QUESTION',
    ])
    expect(actionSpecProblems({ kind: 'APPROVAL', approval: 'STAGE_HOLD', x: 1 }, 'a')).toEqual([
      'a has an unknown field "x"',
    ])
  })
})
