/**
 * `npm run conformance:benign -- [--variant NAME ...] [--jobs N] [--seed S] [--report-dir DIR] [--keep]`
 *
 * The suite must not hold a real deployment to the mock's own choices: every benign variant (variants/, a copy
 * of the mock making another choice the interface document allows) is served as a real target and must pass
 * its selection (default the whole suite). A variant is served in process dressed as a real deployment
 * (CONFORMANCE_REHEARSAL=real with CONFORMANCE_MOCK_ROOT: no control API, no reset, call rates off and
 * unpaced, spending allowed; --lenient as against a real deployment). Serving it over HTTP as a real target
 * would put every call through the documented call rates (60 reads a minute): hours instead of minutes, for
 * the same view of the target (the tests see kind 'real' and no control API either way).
 *
 * First the unbroken mock runs the union of the selections in the same mode with the same seed: a test
 * failing there is not counted against a variant, nor is a call-rate check (they fail in a rehearsal by
 * design: call rates are off). Writes
 * benign.md and benign.json; exit 0 only when every variant passed.
 */
import { randomInt } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { makeVariant } from '../mutants/mutate.js'
import {
  failsInRehearsalByDesign,
  pool,
  ROOT,
  runAsScript,
  runSuite,
  testKey,
  type FailedTest,
  type RunOutcome,
} from '../mutants/suite-run.js'
import type { BenignVariant } from './variant.js'
import { BENIGN_VARIANTS } from './variants/index.js'

const USAGE = `usage: npm run conformance:benign -- [options]
  --variant <name>     run only this variant (repeatable; default every variant)
  --jobs <n>           variants run at once (default 1; each run uses every core)
  --seed <n>           fast-check seed of every run (default a new one, printed)
  --report-dir <dir>   where benign.md and benign.json go (default ./benign-report)
  --keep               keep the variants' copies and their conformance reports (printed)
  --help               this text`

export type BenignVerdict = 'passes' | 'fails' | 'did-not-run'

export type BenignResult = {
  name: string
  choice: string
  selection: string[]
  verdict: BenignVerdict
  /** Requirement ids of the tests that failed (beyond the baseline's failed tests). */
  failedIds: string[]
  /** Tests that failed on the variant and passed on the unbroken mock. */
  failedTests: FailedTest[]
  /** Tests that failed on the variant and on the unbroken mock too, or call-rate checks (not counted). */
  alsoBaseline: string[]
  seconds: number
  note?: string
}

/** The checks a variant runs: its selection (empty: the whole suite). */
export const selectionOf = (v: BenignVariant): string[] => v.select ?? []

/** The selection of the baseline run: the union of the variants' (the whole suite when one has none). */
export function unionOf(variants: readonly BenignVariant[]): string[] {
  if (variants.some((v) => selectionOf(v).length === 0)) return []
  return [...new Set(variants.flatMap(selectionOf))]
}

/** The verdict on a variant from its failed tests and those of the unbroken mock. */
export function judgeBenign(
  failedTests: readonly FailedTest[],
  baseline: ReadonlySet<string>,
  ran: boolean,
): Pick<BenignResult, 'verdict' | 'failedIds' | 'failedTests' | 'alsoBaseline'> {
  const counted = (t: FailedTest) => !baseline.has(testKey(t)) && !failsInRehearsalByDesign(t)
  const fresh = failedTests.filter(counted)
  const alsoBaseline = failedTests.filter((t) => !counted(t)).map(testKey)
  return {
    verdict: !ran ? 'did-not-run' : fresh.length > 0 ? 'fails' : 'passes',
    failedIds: [...new Set(fresh.flatMap((t) => t.ids))].sort(),
    failedTests: fresh,
    alsoBaseline,
  }
}

const VERDICT_TEXT: Record<BenignVerdict, string> = {
  passes: 'passes',
  fails: 'FAILS',
  'did-not-run': 'did not run',
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

export function markdown(
  results: readonly BenignResult[],
  meta: { seed: number; baseline: string[] },
): string {
  const lines = [
    '# Benign-implementation self-test',
    '',
    `Seed ${meta.seed}. ${results.filter((r) => r.verdict === 'passes').length} of ${results.length} benign variants pass the suite in real-deployment mode.`,
    meta.baseline.length > 0
      ? `Failing on the unbroken mock in the same mode too (not counted): ${meta.baseline.map(cell).join('; ')}.`
      : 'The unbroken mock passed the whole selection in the same mode.',
    '',
    '| variant | choice | verdict | failed requirements | selection |',
    '|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${cell(r.choice)} | ${VERDICT_TEXT[r.verdict]}${r.note ? ` (${cell(r.note)})` : ''} | ${r.failedIds.join(', ') || '-'} | ${r.selection.join(', ') || 'whole suite'} |`,
    ),
    '',
  ]
  const failing = results.filter((r) => r.failedTests.length > 0)
  if (failing.length > 0) {
    lines.push('## Failed tests', '')
    for (const r of failing) {
      lines.push(`### ${r.name}`, '')
      for (const t of r.failedTests)
        lines.push(`- ${cell(testKey(t))}${t.error ? `: ${cell(t.error)}` : ''}`)
      lines.push('')
    }
  }
  return lines.join('\n')
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      variant: { type: 'string', multiple: true },
      jobs: { type: 'string', default: '1' },
      seed: { type: 'string' },
      'report-dir': { type: 'string', default: 'benign-report' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const names = values.variant ?? []
  const unknown = names.filter((n) => !BENIGN_VARIANTS.some((v) => v.name === n))
  if (unknown.length > 0) {
    process.stderr.write(`conformance:benign: no variant ${unknown.join(', ')}\n${USAGE}\n`)
    return 2
  }
  const variants =
    names.length > 0 ? BENIGN_VARIANTS.filter((v) => names.includes(v.name)) : BENIGN_VARIANTS
  const jobs = Number(values.jobs)
  const seed = values.seed !== undefined ? Number(values.seed) : randomInt(0, 2 ** 31 - 1)
  if (!Number.isInteger(jobs) || jobs < 1 || !Number.isInteger(seed)) {
    process.stderr.write(`conformance:benign: --jobs and --seed take integers\n${USAGE}\n`)
    return 2
  }
  const reportDir = resolve(values['report-dir'])
  mkdirSync(reportDir, { recursive: true })
  const work = mkdtempSync(join(tmpdir(), 'conformance-benign-'))
  const out = (line: string) => process.stdout.write(`${line}\n`)
  out(
    `conformance:benign: ${variants.length} variants as real targets, seed ${seed}, ${jobs} at a time`,
  )

  // The unbroken mock, served from a copy like the variants (same module paths, same start-up).
  const baselineRoot = join(work, 'baseline')
  makeVariant(ROOT, baselineRoot, { name: 'baseline', patches: [] })
  const union = unionOf(variants)
  mkdirSync(join(baselineRoot, 'report'))
  const baseline = await runSuite({
    mockRoot: baselineRoot,
    selection: union,
    seed,
    reportDir: join(baselineRoot, 'report'),
    mode: 'real',
  })
  if (!baseline.ran) {
    process.stderr.write(`conformance:benign: the unbroken mock did not run:\n${baseline.log}\n`)
    return 1
  }
  const baselineTests = new Set(baseline.failedTests.map(testKey))
  out(
    `baseline (${union.join(', ') || 'whole suite'}): ${baseline.failedTests.length === 0 ? 'passed' : `failed ${baseline.failed.join(', ')} (${baseline.failedTests.length} tests, not counted)`} in ${baseline.seconds.toFixed(0)} s`,
  )

  const results = await pool(
    jobs,
    variants.map((v) => async (): Promise<BenignResult> => {
      const dir = join(work, v.name)
      const selection = selectionOf(v)
      let outcome: RunOutcome
      let note: string | undefined
      try {
        makeVariant(ROOT, dir, v)
        mkdirSync(join(dir, 'report'))
        outcome = await runSuite({
          mockRoot: dir,
          selection,
          seed,
          reportDir: join(dir, 'report'),
          mode: 'real',
        })
        if (!outcome.ran) note = `see ${join(dir, 'report', 'run.log')}`
      } catch (error) {
        outcome = { failed: [], failedTests: [], ran: false, log: '', seconds: 0 }
        note = error instanceof Error ? error.message : String(error)
      }
      const result: BenignResult = {
        name: v.name,
        choice: v.choice,
        selection,
        ...judgeBenign(outcome.failedTests, baselineTests, outcome.ran),
        seconds: outcome.seconds,
        ...(note ? { note } : {}),
      }
      out(
        `${result.verdict === 'passes' ? 'passes  ' : 'FAILS   '} ${v.name}: ${VERDICT_TEXT[result.verdict]}` +
          `${result.failedIds.length ? ` ${result.failedIds.join(', ')}` : ''}` +
          `${result.failedTests.length ? ` (${result.failedTests.length} tests)` : ''} (${result.seconds.toFixed(0)} s)`,
      )
      for (const t of result.failedTests) out(`           ${testKey(t)}`)
      return result
    }),
  )

  const meta = { seed, baseline: baseline.failedTests.map(testKey) }
  writeFileSync(
    join(reportDir, 'benign.json'),
    `${JSON.stringify({ ...meta, baselineIds: baseline.failed, results }, null, 2)}\n`,
  )
  writeFileSync(join(reportDir, 'benign.md'), markdown(results, meta))
  const passing = results.filter((r) => r.verdict === 'passes').length
  out('')
  out(`benign: ${passing} of ${results.length} pass as real targets (seed ${seed})`)
  out(`reports: ${join(reportDir, 'benign.md')}, ${join(reportDir, 'benign.json')}`)
  if (values.keep) out(`variants and their reports kept in ${work}`)
  else rmSync(work, { recursive: true, force: true })
  return passing === results.length ? 0 : 1
}

runAsScript(import.meta.url, 'conformance:benign', main)
