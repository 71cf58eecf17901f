/**
 * `npm run conformance:mutants -- [--variant NAME ...] [--jobs N] [--seed S] [--report-dir DIR] [--keep]
 *   [--mode mock|real|both]`
 *
 * The suite must bite: every variant of variants.ts (a deliberately broken copy of the mock) is served to the
 * conformance CLI (CONFORMANCE_MOCK_ROOT), with the variant's selection, and must fail with one of its
 * expected requirement ids. Each variant runs twice: in mock mode (the copy in process with its control API)
 * and in real-deployment mode (CONFORMANCE_REHEARSAL=real: the copy seen as a real deployment, no control API,
 * no reset, lenient), which shows what the suite catches of the bug on a real target. First the unbroken mock
 * runs the union of the selections in each mode with the same seed: a requirement failing there cannot count
 * as catching anything (the call-rate checks fail in a rehearsal by design). Writes mutants.md and
 * mutants.json; exit 0 only when every variant was caught by an expected id in mock mode, and in real mode
 * too unless the variant states why a black box cannot see it there (realMiss in variants.ts).
 */
import { randomInt } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { makeVariant } from './mutate.js'
import {
  areasOf,
  failsInRehearsalByDesign,
  pool,
  ROOT,
  runAsScript,
  runSuite,
  type Mode,
  type RunOutcome,
} from './suite-run.js'
import { VARIANTS, type Variant } from './variants.js'

const USAGE = `usage: npm run conformance:mutants -- [options]
  --variant <name>     run only this variant (repeatable; default every variant)
  --jobs <n>           variants run at once (default 1; each run uses every core)
  --wide               run the whole areas of the expected ids (slower; shows what else catches each)
  --mode <m>           mock, real or both (default both): the modes the variants run in
  --seed <n>           fast-check seed of every run (default a new one, printed)
  --report-dir <dir>   where mutants.md and mutants.json go (default ./mutants-report)
  --keep               keep the variants' copies and their conformance reports (printed)
  --help               this text`

export type Verdict = 'caught' | 'caught-elsewhere' | 'survived' | 'did-not-run'

/** One mode's outcome for a variant. */
export type ModeResult = {
  verdict: Verdict
  /** Expected ids that failed. */
  caughtBy: string[]
  /** Other ids that failed (beyond the baseline's failures). */
  alsoFailed: string[]
  seconds: number
  note?: string
}

export type VariantResult = ModeResult & {
  name: string
  bug: string
  expect: string[]
  selection: string[]
  /** The modes the variant ran in (default both). */
  modes?: Mode[]
  /** Real-deployment mode (absent with --mode mock). */
  real?: ModeResult
  /** Why a black box cannot see the bug on a real target (variants.ts), when it says so. */
  realMiss?: string
}

/**
 * The failed requirement ids of a run that count: in real-deployment mode an id failed only by call-rate
 * checks is left out (they fail in a rehearsal by design, suite-run.ts).
 */
export function countedFailures(outcome: Pick<RunOutcome, 'failed' | 'failedTests'>, mode: Mode) {
  if (mode === 'mock') return outcome.failed
  const counted = outcome.failedTests.filter((t) => !failsInRehearsalByDesign(t))
  return outcome.failed.filter((id) => counted.some((t) => t.ids.includes(id)))
}

/** The checks a variant runs: those of its expected ids, or (wide) of their areas. */
export const selectionOf = (v: Variant, wide = false): string[] =>
  wide ? areasOf(v.expect) : v.expect

/** The verdict on a variant from the ids its run failed and those the unbroken mock failed. */
export function judge(
  v: Variant,
  failed: readonly string[],
  baselineFailed: ReadonlySet<string>,
  ran: boolean,
): Pick<VariantResult, 'verdict' | 'caughtBy' | 'alsoFailed'> {
  const fresh = failed.filter((id) => !baselineFailed.has(id))
  const caughtBy = fresh.filter((id) => v.expect.includes(id))
  const alsoFailed = fresh.filter((id) => !v.expect.includes(id))
  const verdict: Verdict = !ran
    ? 'did-not-run'
    : caughtBy.length > 0
      ? 'caught'
      : alsoFailed.length > 0
        ? 'caught-elsewhere'
        : 'survived'
  return { verdict, caughtBy, alsoFailed }
}

/**
 * Whether a variant's results keep the run green: caught in mock mode (unless not run, --mode real), and in
 * real mode unless it was not run (--mode mock) or the variant states why a real target cannot show the bug.
 */
export const passes = (
  r: Pick<VariantResult, 'verdict' | 'real' | 'realMiss' | 'modes'>,
): boolean =>
  (r.verdict === 'caught' || (r.modes !== undefined && !r.modes.includes('mock'))) &&
  (r.real === undefined || r.real.verdict === 'caught' || r.realMiss !== undefined)

const VERDICT_TEXT: Record<Verdict, string> = {
  caught: 'caught',
  'caught-elsewhere': 'caught, but not by an expected id',
  survived: 'SURVIVED',
  'did-not-run': 'did not run',
}

const modeText = (m: ModeResult): string =>
  `${VERDICT_TEXT[m.verdict]}${m.note ? ` (${m.note})` : ''}${m.caughtBy.length ? ` by ${m.caughtBy.join(', ')}` : ''}${m.alsoFailed.length ? `; also ${m.alsoFailed.join(', ')}` : ''}`

export function markdown(
  results: readonly VariantResult[],
  meta: { seed: number; baseline: string[]; realBaseline?: string[] },
): string {
  const real = results.some((r) => r.real)
  const lines = [
    '# Mutation self-test',
    '',
    `Seed ${meta.seed}. ${results.filter((r) => r.verdict === 'caught').length} of ${results.length} variants caught by an expected requirement in mock mode` +
      (real
        ? `; ${results.filter((r) => r.real?.verdict === 'caught').length} in real-deployment mode (${results.filter((r) => r.real && r.real.verdict !== 'caught' && r.realMiss).length} more with a stated reason a black box cannot see them).`
        : '.'),
    meta.baseline.length > 0
      ? `Failing on the unbroken mock too (not counted): ${meta.baseline.join(', ')}.`
      : 'The unbroken mock passed the whole selection.',
    ...(meta.realBaseline && meta.realBaseline.length > 0
      ? [
          `Failing on the unbroken mock in real-deployment mode (not counted there): ${meta.realBaseline.join(', ')}.`,
        ]
      : []),
    '',
    real
      ? '| variant | bug | mock mode | real mode | selection |'
      : '| variant | bug | verdict | caught by | also failed | selection |',
    real ? '|---|---|---|---|---|' : '|---|---|---|---|---|---|',
    ...results.map((r) =>
      real
        ? `| ${r.name} | ${r.bug} | ${modeText(r)} | ${r.real ? modeText(r.real) : '-'}${r.realMiss && r.real?.verdict !== 'caught' ? ` (not visible: ${r.realMiss})` : ''} | ${r.selection.join(', ')} |`
        : `| ${r.name} | ${r.bug} | ${VERDICT_TEXT[r.verdict]}${r.note ? ` (${r.note})` : ''} | ${r.caughtBy.join(', ') || '-'} | ${r.alsoFailed.join(', ') || '-'} | ${r.selection.join(', ')} |`,
    ),
    '',
  ]
  return lines.join('\n')
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      variant: { type: 'string', multiple: true },
      jobs: { type: 'string', default: '1' },
      wide: { type: 'boolean', default: false },
      mode: { type: 'string', default: 'both' },
      seed: { type: 'string' },
      'report-dir': { type: 'string', default: 'mutants-report' },
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
  const unknown = names.filter((n) => !VARIANTS.some((v) => v.name === n))
  if (unknown.length > 0) {
    process.stderr.write(`conformance:mutants: no variant ${unknown.join(', ')}\n${USAGE}\n`)
    return 2
  }
  const variants = names.length > 0 ? VARIANTS.filter((v) => names.includes(v.name)) : VARIANTS
  const jobs = Number(values.jobs)
  const seed = values.seed !== undefined ? Number(values.seed) : randomInt(0, 2 ** 31 - 1)
  if (!Number.isInteger(jobs) || jobs < 1 || !Number.isInteger(seed)) {
    process.stderr.write(`conformance:mutants: --jobs and --seed take integers\n${USAGE}\n`)
    return 2
  }
  const modes: Mode[] =
    values.mode === 'both'
      ? ['mock', 'real']
      : values.mode === 'mock' || values.mode === 'real'
        ? [values.mode]
        : []
  if (modes.length === 0) {
    process.stderr.write(`conformance:mutants: --mode is mock, real or both\n${USAGE}\n`)
    return 2
  }
  const reportDir = resolve(values['report-dir'])
  mkdirSync(reportDir, { recursive: true })
  const work = mkdtempSync(join(tmpdir(), 'conformance-mutants-'))
  const out = (line: string) => process.stdout.write(`${line}\n`)
  out(
    `conformance:mutants: ${variants.length} variants, seed ${seed}, ${jobs} at a time, modes ${modes.join(' and ')}${values.wide ? ', whole areas' : ''}`,
  )

  // The unbroken mock, served from a copy like the variants (same module paths, same start-up).
  const baselineRoot = join(work, 'baseline')
  makeVariant(ROOT, baselineRoot, { name: 'baseline', patches: [] })
  const union = [...new Set(variants.flatMap((v) => selectionOf(v, values.wide)))]
  const baselineFailed = new Map<Mode, Set<string>>()
  for (const mode of modes) {
    const dir = join(baselineRoot, `report-${mode}`)
    mkdirSync(dir)
    const baseline = await runSuite({
      mockRoot: baselineRoot,
      selection: union,
      seed,
      reportDir: dir,
      mode,
    })
    if (!baseline.ran) {
      process.stderr.write(
        `conformance:mutants: the unbroken mock did not run (${mode} mode):\n${baseline.log}\n`,
      )
      return 1
    }
    baselineFailed.set(mode, new Set(countedFailures(baseline, mode)))
    out(
      `baseline, ${mode} mode (${union.join(', ')}): ${baselineFailed.get(mode)!.size === 0 ? 'passed' : `failed ${[...baselineFailed.get(mode)!].join(', ')} (not counted)`} in ${baseline.seconds.toFixed(0)} s`,
    )
  }

  const results = await pool(
    jobs,
    variants.map((v) => async (): Promise<VariantResult> => {
      const dir = join(work, v.name)
      const selection = selectionOf(v, values.wide)
      const byMode = new Map<Mode, ModeResult>()
      let made: string | undefined
      try {
        makeVariant(ROOT, dir, v)
      } catch (error) {
        made = error instanceof Error ? error.message : String(error)
      }
      for (const mode of modes) {
        if (made) {
          byMode.set(mode, {
            ...judge(v, [], new Set(), false),
            seconds: 0,
            note: made,
          })
          continue
        }
        const reports = join(dir, `report-${mode}`)
        mkdirSync(reports)
        const outcome = await runSuite({ mockRoot: dir, selection, seed, reportDir: reports, mode })
        byMode.set(mode, {
          ...judge(v, countedFailures(outcome, mode), baselineFailed.get(mode)!, outcome.ran),
          seconds: outcome.seconds,
          ...(outcome.ran ? {} : { note: `see ${join(reports, 'run.log')}` }),
        })
      }
      const result: VariantResult = {
        name: v.name,
        bug: v.bug,
        expect: v.expect,
        selection,
        ...(byMode.get('mock') ?? {
          ...judge(v, [], new Set(), false),
          seconds: 0,
          note: 'mock mode not run (--mode real)',
        }),
        modes,
        ...(byMode.has('real') ? { real: byMode.get('real')! } : {}),
        ...(v.realMiss ? { realMiss: v.realMiss } : {}),
      }
      const real = result.real
      out(
        `${passes(result) ? 'caught  ' : 'MISSED  '} ${v.name}: ` +
          (modes.includes('mock') ? `${modeText(result)} (${result.seconds.toFixed(0)} s)` : '') +
          (real
            ? `${modes.includes('mock') ? '; ' : ''}real mode: ${modeText(real)} (${real.seconds.toFixed(0)} s)${real.verdict !== 'caught' && v.realMiss ? ` [stated: ${v.realMiss}]` : ''}`
            : ''),
      )
      return result
    }),
  )

  const meta = {
    seed,
    baseline: [...(baselineFailed.get('mock') ?? [])],
    ...(baselineFailed.has('real') ? { realBaseline: [...baselineFailed.get('real')!] } : {}),
  }
  writeFileSync(
    join(reportDir, 'mutants.json'),
    `${JSON.stringify({ ...meta, results }, null, 2)}\n`,
  )
  writeFileSync(join(reportDir, 'mutants.md'), markdown(results, meta))
  const caught = results.filter((r) => r.verdict === 'caught').length
  const realCaught = results.filter((r) => r.real?.verdict === 'caught').length
  const ok = results.filter(passes).length
  out('')
  out(
    `mutants: ${caught} of ${results.length} caught by an expected requirement in mock mode` +
      (modes.includes('real') ? `, ${realCaught} in real-deployment mode` : '') +
      ` (seed ${seed})`,
  )
  for (const r of results.filter((x) => !passes(x)))
    out(
      `  not passing: ${r.name}${r.verdict !== 'caught' ? ' (missed in mock mode)' : ' (missed in real mode, no stated reason)'}`,
    )
  out(`reports: ${join(reportDir, 'mutants.md')}, ${join(reportDir, 'mutants.json')}`)
  if (values.keep) out(`variants and their reports kept in ${work}`)
  else rmSync(work, { recursive: true, force: true })
  return ok === results.length ? 0 : 1
}

runAsScript(import.meta.url, 'conformance:mutants', main)
