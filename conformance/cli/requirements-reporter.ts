/**
 * The report per requirement: every id of spec/requirements.yaml with the state its tests give it, from the
 * `[ID]` prefixes of the test titles (conformance/support/req.ts).
 *   passed       every test naming it ran and passed
 *   failed       a test naming it failed
 *   partial      some passed, the others were skipped (with their reasons)
 *   skipped      every test naming it was skipped; the reasons say why (mock only, a role the target lacks,
 *                needs --allow-spend, ...)
 * Tests skipped by the run's spending budget (no --allow-spend, --max-executions or --max-su reached: pace.ts,
 * isBudgetReason) are also listed apart per requirement (`budget`) and counted (RequirementReport.budget): the
 * target was not judged on them because the run chose not to spend, which more budget would change.
 *   not-run      left out by --only (whatever its tests did: a test naming several ids may have run)
 *   not-covered  no test names it
 * buildRequirementReport is pure (tested on synthetic results); RequirementsReporter is the vitest reporter
 * that feeds it and writes requirements.json and requirements.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node'
import type { Requirement } from '../../spec/index.js'
import { compareWithBaseline, type BaselineComparison } from './baseline.js'
import { toCurl, toHar, type Exchange, type OperationTally } from '../support/exchanges.js'
import { isBudgetReason, titleIds } from '../support/pace.js'
import type { Warning } from '../support/warnings.js'
import { isSelected } from './args.js'

export type TestOutcome = {
  /** The test's title (starts with its `[ID]` prefixes). */
  name: string
  /** The test file, relative to the repository. */
  file: string
  state: 'passed' | 'failed' | 'skipped'
  /** Left out before running: by --only (testNamePattern), `.skip` or `.todo`. */
  deselected?: boolean
  /** The reason a skipped test gave (ctx.skip(reason)). */
  note?: string
  /** The first line of the first error of a failed test. */
  error?: string
  /** A failed test's last exchanges with the target (credentials masked). */
  exchanges?: Exchange[]
}

/** Per documented operation: what the run saw of it and what broke its contract. */
export type OperationSummary = {
  operationId: string
  /** Responses checked against the document. */
  responses: number
  statuses: Record<string, number>
  /** Failed tests whose failure was a response check on this operation (status, headers, body). */
  contractFailures: { check: string; test: string }[]
  /** Warnings about its responses (undocumented fields: additive changes, never a failure unless strict). */
  warnings: number
}

export type RequirementState =
  'passed' | 'failed' | 'partial' | 'skipped' | 'not-run' | 'not-covered'

export const STATES: readonly RequirementState[] = [
  'passed',
  'failed',
  'partial',
  'skipped',
  'not-run',
  'not-covered',
]

export type RequirementResult = {
  id: string
  section: string
  verify: Requirement['verify']
  rule: string
  state: RequirementState
  /** Skip reasons of its skipped tests, each once. */
  reasons: string[]
  /** The reasons among them that are the run's spending budget (isBudgetReason): left out by the budget. */
  budget: string[]
  tests: TestOutcome[]
}

export type RunMeta = {
  target: { kind: string; baseUrl?: string }
  seed: number
  only: string[]
  catalogVersion: string
  /** The expected-failures baseline's ids (--baseline). */
  baselineIds?: string[]
  startedAt: string
  durationMs: number
}

export type RequirementReport = RunMeta & {
  totals: Record<RequirementState, number>
  tests: { passed: number; failed: number; skipped: number }
  /** Selected requirements with a test the spending budget left out, and those tests (each once). */
  budget: { requirements: number; tests: number; reasons: string[] }
  requirements: RequirementResult[]
  /** Tests whose titles name no requirement. */
  untagged: TestOutcome[]
  /** Every response of the run, per operation (contract validation). */
  operations: OperationSummary[]
  /** Findings that are not failures, each once. */
  warnings: Warning[]
  /** With a baseline: the new failures, the expected ones, and the baselined ids that now pass. */
  baseline?: BaselineComparison
  /** Against a mock: the client referee's findings about the suite's own requests (report only). */
  clientFindings: ClientFinding[]
}

/** A finding of the mock's client referee about the suite's own requests, with the test that made them. */
export type ClientFinding = {
  rule: string
  requirement_id: string
  test: string
  /** The test declared the probe on purpose (probesClientRule). */
  declared: boolean
}

/** What the run's tests carried in their meta besides their outcomes (setup.ts, use-target.ts). */
export type RunExtras = { tallies: OperationTally[]; warnings: Warning[]; client?: ClientFinding[] }

/** A response check's failure: `[check][REQ-001] operationId: ...` (conformance/checks/failure.ts). */
const CHECK_FAILURE = /\[([a-z][\w-]*)\](?:\[[A-Z]+-\d{3}\])? (\S+?):/

/** The per-operation contract summary from the tallies, the failed tests and the warnings. */
export function summarizeOperations(
  outcomes: readonly TestOutcome[],
  extras: RunExtras,
): OperationSummary[] {
  const ops = new Map<string, OperationSummary>()
  const of = (id: string) => {
    let op = ops.get(id)
    if (!op) {
      op = { operationId: id, responses: 0, statuses: {}, contractFailures: [], warnings: 0 }
      ops.set(id, op)
    }
    return op
  }
  for (const tally of extras.tallies)
    for (const [id, statuses] of Object.entries(tally)) {
      const op = of(id)
      for (const [status, n] of Object.entries(statuses)) {
        op.responses += n
        op.statuses[status] = (op.statuses[status] ?? 0) + n
      }
    }
  for (const t of outcomes) {
    const m = t.state === 'failed' && t.error ? CHECK_FAILURE.exec(t.error) : null
    if (m)
      of(m[2] === 'undocumented' ? 'undocumented' : m[2]!).contractFailures.push({
        check: m[1]!,
        test: t.name,
      })
  }
  for (const w of extras.warnings) {
    const id = /^(\w+)[ :]/.exec(w.key)?.[1]
    if (id && ops.has(id)) of(id).warnings++
  }
  return [...ops.values()].sort((a, b) => a.operationId.localeCompare(b.operationId))
}

const reasonOf = (t: TestOutcome): string =>
  t.note ?? (t.deselected ? 'left out of this run' : 'skipped by the test without a reason')

/** The state of each requirement from the outcomes of the tests naming it. */
export function buildRequirementReport(
  requirements: readonly Pick<Requirement, 'id' | 'section' | 'verify' | 'rule'>[],
  outcomes: readonly TestOutcome[],
  meta: RunMeta,
  extras: RunExtras = { tallies: [], warnings: [] },
): RequirementReport {
  const byId = new Map<string, TestOutcome[]>()
  const untagged: TestOutcome[] = []
  for (const t of outcomes) {
    const ids = titleIds(t.name)
    if (ids.length === 0) untagged.push(t)
    for (const id of new Set(ids)) byId.set(id, [...(byId.get(id) ?? []), t])
  }
  const totals = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<RequirementState, number>
  const results = requirements.map((r): RequirementResult => {
    const tests = byId.get(r.id) ?? []
    const ran = tests.filter((t) => !t.deselected)
    const skipped = ran.filter((t) => t.state === 'skipped')
    let state: RequirementState
    if (!isSelected(meta.only, r.id)) state = 'not-run'
    else if (tests.length === 0) state = 'not-covered'
    else if (ran.length === 0) state = 'not-run'
    else if (ran.some((t) => t.state === 'failed')) state = 'failed'
    else if (skipped.length === ran.length) state = 'skipped'
    else if (skipped.length > 0) state = 'partial'
    else state = 'passed'
    totals[state]++
    const reasons = state === 'not-run' ? [] : [...new Set(skipped.map(reasonOf))]
    return {
      id: r.id,
      section: r.section,
      verify: r.verify,
      rule: r.rule,
      state,
      reasons,
      budget: reasons.filter(isBudgetReason),
      tests,
    }
  })
  const ran = outcomes.filter((t) => !t.deselected)
  const budgetTests = new Set(
    results.flatMap((r) =>
      r.budget.length === 0
        ? []
        : r.tests.filter(
            (t) => !t.deselected && t.state === 'skipped' && isBudgetReason(reasonOf(t)),
          ),
    ),
  )
  return {
    ...meta,
    totals,
    tests: {
      passed: ran.filter((t) => t.state === 'passed').length,
      failed: ran.filter((t) => t.state === 'failed').length,
      skipped: ran.filter((t) => t.state === 'skipped').length,
    },
    budget: {
      requirements: results.filter((r) => r.budget.length > 0).length,
      tests: budgetTests.size,
      reasons: [...new Set(results.flatMap((r) => r.budget))],
    },
    requirements: results,
    untagged,
    operations: summarizeOperations(outcomes, extras),
    ...(meta.baselineIds ? { baseline: compareWithBaseline(results, meta.baselineIds) } : {}),
    warnings: [...new Map(extras.warnings.map((w) => [w.key, w])).values()],
    clientFindings: extras.client ?? [],
  }
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')

const MARK: Record<RequirementState, string> = {
  passed: 'passed',
  failed: '**FAILED**',
  partial: 'partial',
  skipped: 'skipped',
  'not-run': 'not run',
  'not-covered': 'not covered',
}

/** requirements.md: a summary, the failures with their errors, then every requirement in document order. */
export function renderMarkdown(report: RequirementReport): string {
  const lines: string[] = []
  lines.push('# Conformance report by requirement', '')
  lines.push(
    `- target: ${report.target.kind}${report.target.baseUrl ? ` (${report.target.baseUrl})` : ''}`,
    `- requirements catalog: ${report.catalogVersion}`,
    `- fast-check seed: ${report.seed} (replay: \`npm run conformance -- --seed ${report.seed} ...\`)`,
    `- selection: ${report.only.length > 0 ? report.only.join(', ') : 'every requirement'}`,
    `- started: ${report.startedAt}, took ${(report.durationMs / 1000).toFixed(1)} s`,
    `- tests: ${report.tests.passed} passed, ${report.tests.failed} failed, ${report.tests.skipped} skipped`,
    ...(report.budget.requirements > 0
      ? [
          `- left out by the budget: ${report.budget.requirements} requirements (${report.budget.tests} tests: ` +
            `${report.budget.reasons.join('; ')}); a larger --max-executions / --max-su, or --allow-spend, runs them`,
        ]
      : []),
    '',
  )
  if (report.baseline) {
    const b = report.baseline
    lines.push(
      '## Against the expected-failures baseline',
      '',
      `- new failures (fail the run): ${b.newFailures.join(', ') || 'none'}`,
      `- baselined, still failing: ${b.stillFailing.join(', ') || 'none'}`,
      `- baselined, now passing (remove from the baseline): ${b.nowPassing.join(', ') || 'none'}`,
      '',
    )
  }
  lines.push('| state | requirements |', '|---|---|')
  for (const s of STATES) lines.push(`| ${MARK[s]} | ${report.totals[s]} |`)
  lines.push('')
  const failed = report.requirements.filter((r) => r.state === 'failed')
  if (failed.length > 0) {
    lines.push('## Failed', '')
    for (const r of failed) {
      lines.push(`### ${r.id} (${r.section})`, '', r.rule, '')
      for (const t of r.tests.filter((x) => x.state === 'failed')) {
        lines.push(`- ${t.file}: ${t.name}`, `  - ${t.error ?? 'failed'}`)
        const last = t.exchanges?.at(-1)
        if (last) {
          lines.push(
            `  - last exchange: ${last.request.method} ${last.request.url} -> ${last.response.status}` +
              ` (all ${t.exchanges!.length} in failures.har)`,
            '',
            '    ```sh',
            `    ${toCurl(last)}`,
            '    ```',
            '',
            '    ```',
            ...`${last.response.status}\n${last.response.body}`.split('\n').map((l) => `    ${l}`),
            '    ```',
          )
        }
      }
      lines.push('')
    }
  }
  if (report.operations.length > 0) {
    lines.push('## Contract of every response, per operation', '')
    lines.push(
      'Every response the run saw was checked against spec/openapi.yaml (status, headers, body).',
      '',
      '| operation | responses | statuses | contract failures | warnings |',
      '|---|---|---|---|---|',
    )
    for (const op of report.operations)
      lines.push(
        `| ${op.operationId} | ${op.responses} | ${Object.entries(op.statuses)
          .map(([st, n]) => `${st}×${n}`)
          .join(
            ' ',
          )} | ${op.contractFailures.length === 0 ? '-' : `**${op.contractFailures.length}** (${[...new Set(op.contractFailures.map((f) => f.check))].join(', ')})`} | ${op.warnings || '-'} |`,
      )
    lines.push('')
  }
  if (report.clientFindings.length > 0) {
    lines.push(
      "## The suite's own requests, judged by the mock's client referee",
      '',
      "Against a mock the referee judges every test's own requests. A retry rule (RETRY-001/002/004/017) broken",
      'without a declared probe (`probesClientRule`) fails its test; other findings are listed only.',
      '',
      '| rule | requirement | declared probes | other | tests |',
      '|---|---|---|---|---|',
    )
    const byRule = new Map<string, ClientFinding[]>()
    for (const f of report.clientFindings) byRule.set(f.rule, [...(byRule.get(f.rule) ?? []), f])
    for (const [rule, list] of byRule) {
      const declared = list.filter((f) => f.declared).length
      lines.push(
        `| ${rule} | ${list[0]!.requirement_id} | ${declared} | ${list.length - declared} | ${cell([...new Set(list.map((f) => f.test))].slice(0, 5).join('; '))} |`,
      )
    }
    lines.push('')
  }
  if (report.warnings.length > 0) {
    lines.push('## Warnings (not failures)', '')
    for (const w of report.warnings)
      lines.push(`- ${cell(w.message)}${w.test ? ` (first met in: ${cell(w.test)})` : ''}`)
    lines.push('')
  }
  lines.push('## Every requirement', '')
  lines.push('| id | verify | state | tests | reason / section |', '|---|---|---|---|---|')
  for (const r of report.requirements) {
    const ran = r.tests.filter((t) => !t.deselected)
    const counts =
      ran.length === 0 || r.state === 'not-run'
        ? '-'
        : `${ran.filter((t) => t.state === 'passed').length}/${ran.length}` +
          (ran.length < r.tests.length ? ` (${r.tests.length - ran.length} not run)` : '')
    const other = r.reasons.filter((x) => !isBudgetReason(x))
    const why =
      r.reasons.length === 0
        ? r.section
        : [
            ...(r.budget.length > 0 ? [`left out by the budget (${r.budget.join('; ')})`] : []),
            ...other,
          ].join('; ')
    lines.push(`| ${r.id} | ${r.verify} | ${MARK[r.state]} | ${counts} | ${cell(why)} |`)
  }
  lines.push(
    '',
    'tests: passed/ran of the tests naming the requirement. verify (spec/requirements.yaml): real = checkable on',
    'any deployment, mock = needs the mock control API, client = an obligation of the client or receiver kit.',
    'left out by the budget: tests the run did not start because it was not allowed to spend (--allow-spend) or',
    'reached --max-executions / --max-su; the target was not judged on them.',
    '',
  )
  return lines.join('\n')
}

/** The outcome of each test of the run's modules. */
export function outcomesOf(modules: readonly TestModule[]): TestOutcome[] {
  const out: TestOutcome[] = []
  for (const m of modules) {
    for (const t of m.children.allTests()) {
      const r = t.result()
      const state = r.state === 'pending' ? 'skipped' : r.state
      const outcome: TestOutcome = { name: t.name, file: m.relativeModuleId, state }
      if (t.options.mode !== 'run' && t.options.mode !== 'only') outcome.deselected = true
      if (r.state === 'skipped' && r.note) outcome.note = r.note
      if (r.state === 'failed') outcome.error = firstLine(r.errors[0])
      const exchanges = t.meta().exchanges
      if (r.state === 'failed' && exchanges) outcome.exchanges = exchanges
      // A failed beforeAll (or a file that does not load) leaves its tests skipped: they failed.
      const hookError = r.state === 'skipped' && !r.note && !outcome.deselected && failedParent(t)
      if (hookError) {
        outcome.state = 'failed'
        outcome.error = hookError
      }
      out.push(outcome)
    }
  }
  return out
}

/** The first line of an error; for a failed property, with the error it got ("Got ..."). */
export function firstLine(e: { message?: string } | undefined): string {
  const lines = (e?.message ?? String(e)).split('\n')
  const got = lines[0]!.startsWith('Property failed')
    ? lines.find((l) => l.startsWith('Got '))
    : undefined
  return (got ? `${lines[0]}: ${got.replace(/^Got (error: )?/, '')}` : lines[0]!).slice(0, 500)
}

/** The error of the nearest enclosing suite or module that failed, if any. */
function failedParent(t: TestCase): string | undefined {
  let p: TestSuite | TestModule | undefined = t.parent
  while (p) {
    const errors = p.errors()
    if (p.state() === 'failed' || errors.length > 0)
      return errors.length > 0 ? firstLine(errors[0]) : 'a hook of its suite failed'
    p = p.type === 'module' ? undefined : p.parent
  }
  return undefined
}

/** The tallies and warnings the run's tests carried in their meta. */
export function extrasOf(modules: readonly TestModule[]): RunExtras {
  const extras: RunExtras = { tallies: [], warnings: [], client: [] }
  for (const m of modules)
    for (const t of m.children.allTests()) {
      const meta = t.meta()
      for (const v of meta.clientViolations ?? [])
        extras.client!.push({
          ...v,
          test: t.name,
          declared: (meta.probes ?? []).includes(v.requirement_id),
        })
      if (meta.operations) extras.tallies.push(meta.operations)
      if (meta.warnings) extras.warnings.push(...meta.warnings)
    }
  return extras
}

/** failures.har: the exchanges of every failed test (HAR 1.2, credentials masked). */
export const failuresHar = (report: RequirementReport): Record<string, unknown> =>
  toHar(
    [...new Set(report.requirements.flatMap((r) => r.tests))].flatMap((t) =>
      t.state === 'failed' ? (t.exchanges ?? []) : [],
    ),
  )

/** The vitest reporter: at the end of the run, builds the report and writes its files. */
export class RequirementsReporter implements Reporter {
  report: RequirementReport | undefined
  private startedAt = new Date()

  constructor(
    private readonly requirements: readonly Requirement[],
    private readonly meta: Omit<RunMeta, 'startedAt' | 'durationMs'>,
    private readonly dir: string,
  ) {}

  onTestRunStart() {
    this.startedAt = new Date()
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    this.report = buildRequirementReport(
      this.requirements,
      outcomesOf(modules),
      {
        ...this.meta,
        startedAt: this.startedAt.toISOString(),
        durationMs: Date.now() - this.startedAt.getTime(),
      },
      extrasOf(modules),
    )
    mkdirSync(this.dir, { recursive: true })
    writeFileSync(join(this.dir, 'requirements.json'), `${JSON.stringify(this.report, null, 2)}\n`)
    writeFileSync(join(this.dir, 'requirements.md'), renderMarkdown(this.report))
    writeFileSync(
      join(this.dir, 'failures.har'),
      `${JSON.stringify(failuresHar(this.report), null, 2)}\n`,
    )
  }
}
