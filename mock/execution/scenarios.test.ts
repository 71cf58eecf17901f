import { describe, expect, it } from 'vitest'
import {
  assertScenario,
  BUILTIN_SCENARIOS,
  DEFAULT_SCENARIO,
  NEXT_STEP_SCENARIOS,
  PROGRESS_SCENARIOS,
  RESULT_RULE_SCENARIOS,
  ScenarioError,
  validateScenario,
} from './scenarios.js'

describe('scenarios', () => {
  it('has every built-in scenario of MOCK-CONTRACT, each valid', () => {
    // The result-rule scenarios (execution/outputs.test.ts) and the next-step ones (conformance
    // tests/outputs/next-step-scenarios.test.ts) come on top of MOCK-CONTRACT's.
    const resultRules = new Set(
      [...RESULT_RULE_SCENARIOS, ...NEXT_STEP_SCENARIOS, ...PROGRESS_SCENARIOS].map((s) => s.name),
    )
    expect(BUILTIN_SCENARIOS.map((s) => s.name).filter((n) => !resultRules.has(n))).toEqual([
      'succeed',
      'slow',
      'fail',
      'json-output',
      'file-output',
      'url-output',
      'needs-action',
      'needs-approval',
      'needs-answer',
      'credential-leak',
      'over-budget',
      'partial',
      'missing-output',
    ])
    for (const s of BUILTIN_SCENARIOS) expect(validateScenario(s), s.name).toEqual([])
    expect(DEFAULT_SCENARIO).toBe('succeed')
  })

  it('scripts succeed as RUNNING at 1, a FINAL TEXT output at 4 and SUCCEEDED at 5', () => {
    const succeed = BUILTIN_SCENARIOS.find((s) => s.name === 'succeed')!
    expect(succeed.steps.filter((s) => s.step !== 'spend')).toMatchObject([
      { at: 1, step: 'running' },
      { at: 4, step: 'output', output: { type: 'TEXT' } },
      { at: 5, step: 'succeed' },
    ])
  })

  it('leaves slow without a terminal step, limits partial to Runs and applies missing-output to both', () => {
    const byName = new Map(BUILTIN_SCENARIOS.map((s) => [s.name, s]))
    expect(byName.get('slow')?.steps.some((s) => s.step === 'succeed' || s.step === 'fail')).toBe(
      false,
    )
    expect(byName.get('partial')?.applies_to).toEqual(['workflow'])
    expect(byName.get('missing-output')?.applies_to).toEqual(['deployment', 'workflow'])
  })

  it('[STATE-006][STATE-019][STATE-020] refuses a script ending FAILED with a code the transition table gives another status', () => {
    const ending = (code: string) =>
      validateScenario({
        name: 'bad-end',
        description: 'x',
        applies_to: ['deployment'],
        steps: [
          { at: 1, step: 'running' },
          { at: 2, step: 'fail', code },
        ],
      })
    expect(ending('QUEUE_TIMEOUT')).toEqual([
      'steps[1]: the transition table ends an execution with QUEUE_TIMEOUT as EXPIRED (a queued execution whose queue time limit passed), never FAILED; the mock applies queue_seconds itself',
    ])
    for (const code of ['CANCELED', 'AUTHORIZATION_REVOKED', 'SESSION_DELETED'])
      expect(ending(code)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^steps\\[1\\]: the transition table ends an execution with ${code} as CANCELED`,
          ),
        ),
      ])
    expect(ending('EXECUTION_FAILED')).toEqual([])
  })

  it('reports each problem of an invalid scenario with its step', () => {
    const problems = validateScenario({
      name: 'Bad Name',
      description: 'x',
      applies_to: ['session'],
      steps: [
        { at: 2, step: 'succeed' },
        { at: 1, step: 'running' },
        { at: 3, step: 'teleport' },
        { at: 4, step: 'spend', su: 0 },
        { at: 5, step: 'fail', code: 'NOT_FOUND' },
        { at: 6, step: 'output', output: { type: 'FILE', filename: 'a.txt' } },
        { at: 7, step: 'running', extra: true },
      ],
    })
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('name must be lowercase'),
        expect.stringContaining('applies_to must be'),
        'steps[1].at (1) is earlier than the step before it (2): steps must be in time order',
        'steps[1] comes after the terminal step at index 0',
        expect.stringContaining('steps[2].step must be one of running, output'),
        'steps[3].su must be a number > 0',
        expect.stringContaining('steps[4].code must be an execution error code'),
        'steps[5].output.mime_type must be a string',
        'steps[5].output.content must be a string',
        'steps[6] has an unknown field "extra"',
      ]),
    )
  })

  it('[EVT-004] checks a tool step: a tool name and call id are identifiers; arguments and result are any JSON', () => {
    const tool = (step: Record<string, unknown>) =>
      validateScenario({
        name: 'tools',
        description: 'x',
        applies_to: ['deployment'],
        steps: [{ at: 1, step: 'tool', ...step }],
      })
    expect(tool({ name: 'web_search', call_id: 'c-1', arguments: { q: 1 }, result: [1] })).toEqual(
      [],
    )
    expect(tool({})).toEqual([
      'steps[0].name must be a tool name: 1-64 letters, digits, _ . : or -',
    ])
    expect(tool({ name: 'search the web' })).toEqual([
      'steps[0].name must be a tool name: 1-64 letters, digits, _ . : or -',
    ])
    expect(tool({ name: 'x', call_id: '' })).toEqual([
      'steps[0].call_id must be 1-128 letters, digits, _ . : or -',
    ])
    expect(tool({ name: 'x', input: 1 })).toEqual(['steps[0] has an unknown field "input"'])
  })

  it('[RUN-038][RUN-039][RUN-008] checks the step marks of a Run script: Runs only, one step at a time, a retry only after a failure, nothing during a queue wait', () => {
    const run = (steps: Record<string, unknown>[], applies_to = ['workflow']) =>
      validateScenario({
        name: 'steps',
        description: 'x',
        applies_to,
        steps: [{ at: 1, step: 'running' }, ...steps],
      })
    const good = [
      { at: 2, step: 'step_start', id: 'a', queued_s: 10 },
      { at: 12, step: 'step_end', status: 'FAILED' },
      { at: 13, step: 'step_start', id: 'a' },
      { at: 14, step: 'step_end' },
      { at: 15, step: 'succeed' },
    ]
    expect(run(good)).toEqual([])
    expect(run(good, ['deployment', 'workflow'])).toEqual([
      'step_start and step_end mark the steps of a Run: applies_to must be ["workflow"]',
    ])
    expect(
      run([
        { at: 2, step: 'step_start', id: 'a' },
        { at: 3, step: 'step_start', id: 'b' },
      ]),
    ).toEqual(['steps[2]: step "a" is still open; end it (step_end) first'])
    expect(
      run([
        { at: 2, step: 'step_start', id: 'a' },
        { at: 3, step: 'step_end' },
        { at: 4, step: 'step_start', id: 'a' },
      ]),
    ).toEqual(['steps[3]: step "a" already succeeded; only a step that ended FAILED runs again'])
    expect(run([{ at: 2, step: 'step_end', status: 'DONE' }])).toEqual([
      'steps[1]: no step is open (step_start first)',
      'steps[1].status must be one of SUCCEEDED, FAILED',
    ])
    expect(
      run([
        { at: 2, step: 'step_start', id: 'a', queued_s: 10 },
        { at: 5, step: 'tool', name: 'x' },
      ]),
    ).toEqual([
      'steps[2].at (5) falls in the queue wait of steps[1] (until 12): nothing happens while a step waits queued',
    ])
    expect(run([{ at: 2, step: 'step_start', id: 'no spaces', queued_s: -1 }])).toEqual([
      'steps[1].id must be a step id: 1-64 letters, digits, _ . : or -',
      'steps[1].queued_s must be a number of seconds >= 0',
    ])
    expect(
      validateScenario({
        name: 'early',
        description: 'x',
        applies_to: ['workflow'],
        steps: [{ at: 1, step: 'step_start', id: 'a' }],
      }),
    ).toEqual(['steps[0]: a step starts once the Run runs (a running step first)'])
  })

  it('throws a ScenarioError naming the scenario from assertScenario', () => {
    expect(() =>
      assertScenario({ name: 'empty', description: '', applies_to: ['workflow'], steps: [] }),
    ).toThrow(ScenarioError)
    expect(() =>
      assertScenario({ name: 'empty', description: '', applies_to: ['workflow'], steps: [] }),
    ).toThrow(/invalid scenario "empty"/)
  })
})
