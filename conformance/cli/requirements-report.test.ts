/** The report per requirement (requirements-reporter.ts), built from synthetic test results. */
import { describe, expect, it } from 'vitest'
import {
  buildRequirementReport,
  renderMarkdown,
  type RunMeta,
  type TestOutcome,
} from './requirements-reporter.js'

/** A title with requirement-id prefixes, built so this file's source names no requirement itself. */
const tag = (...ids: string[]) => ids.map((id) => `[${id}]`).join('')

const rule = (id: string) => ({ id, section: 'S', verify: 'real' as const, rule: `rule ${id}` })
const CATALOG = ['A-001', 'A-002', 'A-003', 'A-004', 'A-005', 'B-001', 'B-002'].map(rule)
const META: RunMeta = {
  target: { kind: 'real', baseUrl: 'https://api.example.com' },
  seed: 7,
  only: [],
  catalogVersion: '1.3.0',
  startedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 1500,
}
const test = (ids: string[], state: TestOutcome['state'], extra: Partial<TestOutcome> = {}) => ({
  name: `${tag(...ids)} a test`,
  file: 'conformance/tests/x.test.ts',
  state,
  ...extra,
})

describe('requirement report', () => {
  const outcomes: TestOutcome[] = [
    test(['A-001'], 'passed'),
    test(['A-001', 'A-002'], 'passed'),
    test(['A-002'], 'failed', { error: 'expected 404, got 200' }),
    test(['A-003'], 'passed'),
    test(['A-003'], 'skipped', { note: 'needs --allow-spend' }),
    test(['A-004'], 'skipped', { note: 'mock only: needs virtual time' }),
    test(['A-004'], 'skipped', { note: 'mock only: needs virtual time' }),
    test(['A-004'], 'skipped', { note: 'needs --allow-spend' }),
    test(['B-001'], 'skipped', { deselected: true }),
    { name: 'a test naming no requirement', file: 'f', state: 'passed' },
  ]
  const report = buildRequirementReport(CATALOG, outcomes, META)
  const state = (id: string) => report.requirements.find((r) => r.id === id)!.state

  it('passes a requirement whose tests all passed, fails one with any failed test', () => {
    expect(state('A-001')).toBe('passed')
    expect(state('A-002')).toBe('failed')
  })

  it('calls a requirement partial when some tests passed and the others were skipped', () => {
    expect(state('A-003')).toBe('partial')
    expect(report.requirements.find((r) => r.id === 'A-003')!.reasons).toEqual([
      'needs --allow-spend',
    ])
  })

  it('keeps each skip reason once', () => {
    const a4 = report.requirements.find((r) => r.id === 'A-004')!
    expect(a4.state).toBe('skipped')
    expect(a4.reasons).toEqual(['mock only: needs virtual time', 'needs --allow-spend'])
  })

  it('tells deselected tests from uncovered requirements', () => {
    expect(state('B-001')).toBe('not-run')
    expect(state('A-005')).toBe('not-covered')
    expect(state('B-002')).toBe('not-covered')
  })

  it('counts requirements and tests, and keeps untagged tests apart', () => {
    expect(report.totals).toEqual({
      passed: 1,
      failed: 1,
      partial: 1,
      skipped: 1,
      'not-run': 1,
      'not-covered': 2,
    })
    expect(report.tests).toEqual({ passed: 4, failed: 1, skipped: 4 })
    expect(report.untagged.map((t) => t.name)).toEqual(['a test naming no requirement'])
  })

  it('with --only, reports every unselected requirement as not run', () => {
    const only = buildRequirementReport(CATALOG, outcomes, { ...META, only: ['A-002', 'B'] })
    const states = Object.fromEntries(only.requirements.map((r) => [r.id, r.state]))
    expect(states).toEqual({
      'A-001': 'not-run',
      'A-002': 'failed',
      'A-003': 'not-run',
      'A-004': 'not-run',
      'A-005': 'not-run',
      'B-001': 'not-run',
      'B-002': 'not-covered',
    })
  })

  it('renders every requirement, the failures with their errors, and the seed in Markdown', () => {
    const md = renderMarkdown(report)
    for (const r of CATALOG) expect(md).toContain(`| ${r.id} |`)
    expect(md).toContain('## Failed')
    expect(md).toContain('expected 404, got 200')
    expect(md).toContain('--seed 7')
    expect(md).toMatch(
      /\| A-004 \| real \| skipped \| 0\/3 \| mock only: needs virtual time; needs --allow-spend \|/,
    )
  })
})
