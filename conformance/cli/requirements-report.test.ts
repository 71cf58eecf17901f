/** The report per requirement (requirements-reporter.ts), built from synthetic test results. */
import { describe, expect, it } from 'vitest'
import type { Exchange } from '../support/exchanges.js'
import {
  buildRequirementReport,
  failuresHar,
  firstLine,
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
      /\| A-004 \| real \| skipped \| 0\/3 \| left out by the budget \(needs --allow-spend\); mock only: needs virtual time \|/,
    )
  })

  it('says per requirement what the budget left out and why, apart from the other skips', () => {
    const budget = buildRequirementReport(
      CATALOG,
      [
        test(['A-001'], 'skipped', { note: '--max-executions 20 reached' }),
        test(['A-001', 'A-002'], 'skipped', { note: '--max-su 50 reached' }),
        test(['A-002'], 'passed'),
        test(['A-003'], 'skipped', { note: 'mock only: needs virtual time' }),
        test(['A-004'], 'skipped', { note: 'needs --allow-spend' }),
        test(['B-001'], 'skipped', { note: 'needs --allow-spend' }),
      ],
      { ...META, only: ['A'] },
    )
    const of = (id: string) => budget.requirements.find((r) => r.id === id)!
    expect(of('A-001')).toMatchObject({
      state: 'skipped',
      budget: ['--max-executions 20 reached', '--max-su 50 reached'],
    })
    expect(of('A-002')).toMatchObject({ state: 'partial', budget: ['--max-su 50 reached'] })
    // A mock-only skip is not the budget's.
    expect(of('A-003')).toMatchObject({ state: 'skipped', budget: [] })
    // Outside the selection (--only A): not run, whatever its test did.
    expect(of('B-001')).toMatchObject({ state: 'not-run', budget: [] })
    expect(budget.budget).toEqual({
      requirements: 3,
      tests: 3,
      reasons: ['--max-executions 20 reached', '--max-su 50 reached', 'needs --allow-spend'],
    })
    const md = renderMarkdown(budget)
    expect(md).toContain('- left out by the budget: 3 requirements (3 tests: ')
    expect(md).toMatch(
      /\| A-002 \| real \| partial \| 1\/2 \| left out by the budget \(--max-su 50 reached\) \|/,
    )
    expect(md).toMatch(/\| A-003 \| real \| skipped \| 0\/1 \| mock only: needs virtual time \|/)
    expect(report.budget).toEqual({ requirements: 2, tests: 2, reasons: ['needs --allow-spend'] })
  })

  const exchange: Exchange = {
    startedAt: '2026-01-01T00:00:01.000Z',
    ms: 12,
    request: {
      method: 'POST',
      url: 'https://api.example.com/v1/files',
      headers: { Authorization: 'Bearer sk_l****', 'Idempotency-Key': 'k-1' },
      body: '{"a":1}',
    },
    response: {
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: '{"file_id":"f"}',
    },
  }

  it('shows a failure with its last exchange as curl and all of them in failures.har', () => {
    const withExchange = buildRequirementReport(
      CATALOG,
      [test(['A-002'], 'failed', { error: 'expected 409, got 201', exchanges: [exchange] })],
      META,
    )
    const md = renderMarkdown(withExchange)
    expect(md).toContain(
      `curl -i -X POST 'https://api.example.com/v1/files' -H 'Authorization: Bearer sk_l****' -H 'Idempotency-Key: k-1' --data-binary '{"a":1}'`,
    )
    expect(md).toContain('{"file_id":"f"}')
    const har = failuresHar(withExchange) as {
      log: { version: string; entries: { request: { url: string } }[] }
    }
    expect(har.log.version).toBe('1.2')
    expect(har.log.entries.map((e) => e.request.url)).toEqual(['https://api.example.com/v1/files'])
  })

  it('sums the responses of every test per operation and names the contract failures', () => {
    const r = buildRequirementReport(
      CATALOG,
      [
        test(['A-001'], 'passed'),
        test(['A-002'], 'failed', {
          error:
            'Property failed after 1 tests: [response-schema][ERR-001] getTurn: body.status must be one of …',
        }),
      ],
      META,
      {
        tallies: [
          { getTurn: { '200': 2 } },
          { getTurn: { '200': 1, '404': 1 }, listDeployments: { '200': 1 } },
        ],
        warnings: [
          { key: 'listDeployments 200: deployments[].extra', message: 'an undocumented field' },
        ],
      },
    )
    expect(r.operations).toEqual([
      {
        operationId: 'getTurn',
        responses: 4,
        statuses: { '200': 3, '404': 1 },
        contractFailures: [{ check: 'response-schema', test: test(['A-002'], 'failed').name }],
        warnings: 0,
      },
      {
        operationId: 'listDeployments',
        responses: 1,
        statuses: { '200': 1 },
        contractFailures: [],
        warnings: 1,
      },
    ])
    const md = renderMarkdown(r)
    expect(md).toContain('| getTurn | 4 | 200×3 404×1 | **1** (response-schema) | - |')
    expect(md).toContain('## Warnings (not failures)')
  })

  it("names a failed property's own error after its first line", () => {
    expect(
      firstLine({
        message:
          'Property failed after 2 tests\n{ seed: 1 }\nCounterexample: [1]\nGot AssertionError: expected 1 to be 2',
      }),
    ).toBe('Property failed after 2 tests: AssertionError: expected 1 to be 2')
    expect(firstLine({ message: 'plain\nsecond' })).toBe('plain')
  })

  it('compares the failures with a baseline', () => {
    const r = buildRequirementReport(CATALOG, outcomes, {
      ...META,
      baselineIds: ['A-002', 'A-001'],
    })
    expect(r.baseline).toEqual({ newFailures: [], stillFailing: ['A-002'], nowPassing: ['A-001'] })
    expect(renderMarkdown(r)).toContain('now passing (remove from the baseline): A-001')
  })

  it("lists the referee's findings about the suite's own requests, declared probes apart", () => {
    const r = buildRequirementReport(CATALOG, outcomes, META, {
      tallies: [],
      warnings: [],
      client: [
        {
          rule: 'resend-after-non-retryable',
          requirement_id: 'RETRY-001',
          test: 't1',
          declared: true,
        },
        {
          rule: 'resend-after-non-retryable',
          requirement_id: 'RETRY-001',
          test: 't2',
          declared: true,
        },
        { rule: 'polling-too-often', requirement_id: 'RATE-007', test: 't3', declared: false },
      ],
    })
    const md = renderMarkdown(r)
    expect(md).toContain('| resend-after-non-retryable | RETRY-001 | 2 | 0 | t1; t2 |')
    expect(md).toContain('| polling-too-often | RATE-007 | 0 | 1 | t3 |')
  })
})
