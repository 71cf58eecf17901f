import { describe, expect, it } from 'vitest'
import { RESULT_RULE_SCENARIOS, validateScenario } from './scenarios.js'

const withOutput = (output: Record<string, unknown>) => ({
  name: 'x',
  description: '',
  applies_to: ['deployment'],
  steps: [{ at: 1, step: 'output', output }],
})

describe('result-rule scenario vocabulary', () => {
  it('has every result-rule scenario valid and documented', () => {
    for (const s of RESULT_RULE_SCENARIOS) {
      expect(validateScenario(s), s.name).toEqual([])
      expect(s.description.length, s.name).toBeGreaterThan(20)
    }
  })

  it('accepts repeat, path and preparation fields and refuses bad values', () => {
    const file = { type: 'FILE', filename: 'a.txt', mime_type: 'text/plain', content: 'a' }
    expect(
      validateScenario(
        withOutput({ ...file, repeat: 3, path: 'attachments/a.txt', prepare_seconds: 60 }),
      ),
    ).toEqual([])
    expect(validateScenario(withOutput({ ...file, repeat: 0 }))).toHaveLength(1)
    expect(validateScenario(withOutput({ ...file, repeat: 200 * 1024 * 1024 }))).toHaveLength(1)
    expect(validateScenario(withOutput({ ...file, prepare_seconds: -1 }))).toHaveLength(1)
    expect(validateScenario(withOutput({ ...file, prepare_fails: 'yes' }))).toHaveLength(1)
    expect(validateScenario(withOutput({ type: 'TEXT', text: 'a', path: 'x' }))).toHaveLength(1)
    expect(
      validateScenario(withOutput({ type: 'JSON', data: 1, check_contract_type: true })),
    ).toEqual([])
  })
})
