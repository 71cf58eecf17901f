/**
 * `npm run conformance:mutants -- [--variant NAME ...] [--jobs N] [--seed S] [--report-dir DIR] [--keep]`
 *
 * The suite must bite: every variant of variants.ts (a deliberately broken copy of the mock) is served in
 * process to the conformance CLI (CONFORMANCE_MOCK_ROOT), with the variant's selection, and must fail with one
 * of its expected requirement ids. First the unbroken mock runs the union of the selections with the same seed:
 * a requirement failing there cannot count as catching anything. Writes mutants.md and mutants.json; exit 0 only
 * when every variant was caught by an expected id.
 */
import { spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { makeVariant } from './mutate.js'
import { VARIANTS, type Variant } from './variants.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = join(ROOT, 'conformance/cli/main.ts')

const USAGE = `usage: npm run conformance:mutants -- [options]
  --variant <name>     run only this variant (repeatable; default every variant)
  --jobs <n>           variants run at once (default 1; each run uses every core)
  --wide               run the whole areas of the expected ids (slower; shows what else catches each)
  --seed <n>           fast-check seed of every run (default a new one, printed)
  --report-dir <dir>   where mutants.md and mutants.json go (default ./mutants-report)
  --keep               keep the variants' copies and their conformance reports (printed)
  --help               this text`

export type Verdict = 'caught' | 'caught-elsewhere' | 'survived' | 'did-not-run'

export type VariantResult = {
  name: string
  bug: string
  expect: string[]
  selection: string[]
  verdict: Verdict
  /** Expected ids that failed. */
  caughtBy: string[]
  /** Other ids that failed (beyond the baseline's failures). */
  alsoFailed: string[]
  seconds: number
  note?: string
}

type RunOutcome = { failed: string[]; ran: boolean; log: string; seconds: number }

/** The areas of requirement ids (SES-001 -> SES). */
const areasOf = (ids: readonly string[]): string[] => [
  ...new Set(ids.map((id) => id.replace(/-\d{3}$/, ''))),
]

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

/** Runs the conformance CLI in a child process against the mock at `mockRoot`. */
function runSuite(
  mockRoot: string,
  selection: string[],
  seed: number,
  reportDir: string,
): Promise<RunOutcome> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('VITEST') && !k.startsWith('TARGET_') && !k.startsWith('FC_'),
    ),
  )
  const started = process.hrtime.bigint()
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI,
        '--only',
        selection.join(','),
        '--seed',
        String(seed),
        '--report-dir',
        reportDir,
      ],
      {
        cwd: ROOT,
        env: { ...env, CONFORMANCE_MOCK_ROOT: mockRoot, FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let log = ''
    child.stdout.on('data', (d: Buffer) => (log += d.toString()))
    child.stderr.on('data', (d: Buffer) => (log += d.toString()))
    child.on('error', fail)
    child.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      writeFileSync(join(reportDir, 'run.log'), log)
      try {
        const report = JSON.parse(readFileSync(join(reportDir, 'requirements.json'), 'utf8')) as {
          requirements: { id: string; state: string }[]
        }
        const failed = report.requirements.filter((r) => r.state === 'failed').map((r) => r.id)
        done({ failed, ran: true, log, seconds })
      } catch {
        done({ failed: [], ran: false, log, seconds })
      }
    })
  })
}

/** Runs `tasks` with at most `jobs` at once, in order of start. */
async function pool<T>(jobs: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, tasks.length)) }, worker))
  return results
}

const VERDICT_TEXT: Record<Verdict, string> = {
  caught: 'caught',
  'caught-elsewhere': 'caught, but not by an expected id',
  survived: 'SURVIVED',
  'did-not-run': 'did not run',
}

export function markdown(
  results: readonly VariantResult[],
  meta: { seed: number; baseline: string[] },
): string {
  const lines = [
    '# Mutation self-test',
    '',
    `Seed ${meta.seed}. ${results.filter((r) => r.verdict === 'caught').length} of ${results.length} variants caught by an expected requirement.`,
    meta.baseline.length > 0
      ? `Failing on the unbroken mock too (not counted): ${meta.baseline.join(', ')}.`
      : 'The unbroken mock passed the whole selection.',
    '',
    '| variant | bug | verdict | caught by | also failed | selection |',
    '|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.bug} | ${VERDICT_TEXT[r.verdict]}${r.note ? ` (${r.note})` : ''} | ${r.caughtBy.join(', ') || '-'} | ${r.alsoFailed.join(', ') || '-'} | ${r.selection.join(', ')} |`,
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
  const reportDir = resolve(values['report-dir'])
  mkdirSync(reportDir, { recursive: true })
  const work = mkdtempSync(join(tmpdir(), 'conformance-mutants-'))
  const out = (line: string) => process.stdout.write(`${line}\n`)
  out(
    `conformance:mutants: ${variants.length} variants, seed ${seed}, ${jobs} at a time${values.wide ? ', whole areas' : ''}`,
  )

  // The unbroken mock, served from a copy like the variants (same module paths, same start-up).
  const baselineRoot = join(work, 'baseline')
  makeVariant(ROOT, baselineRoot, { name: 'baseline', bug: '', patches: [], expect: [] })
  const union = [...new Set(variants.flatMap((v) => selectionOf(v, values.wide)))]
  mkdirSync(join(baselineRoot, 'report'))
  const baseline = await runSuite(baselineRoot, union, seed, join(baselineRoot, 'report'))
  if (!baseline.ran) {
    process.stderr.write(`conformance:mutants: the unbroken mock did not run:\n${baseline.log}\n`)
    return 1
  }
  const baselineFailed = new Set(baseline.failed)
  out(
    `baseline (${union.join(', ')}): ${baseline.failed.length === 0 ? 'passed' : `failed ${baseline.failed.join(', ')} (not counted)`} in ${baseline.seconds.toFixed(0)} s`,
  )

  const results = await pool(
    jobs,
    variants.map((v) => async (): Promise<VariantResult> => {
      const dir = join(work, v.name)
      const selection = selectionOf(v, values.wide)
      let outcome: RunOutcome
      let note: string | undefined
      try {
        makeVariant(ROOT, dir, v)
        mkdirSync(join(dir, 'report'))
        outcome = await runSuite(dir, selection, seed, join(dir, 'report'))
        if (!outcome.ran) note = `see ${join(dir, 'report', 'run.log')}`
      } catch (error) {
        outcome = { failed: [], ran: false, log: '', seconds: 0 }
        note = error instanceof Error ? error.message : String(error)
      }
      const result: VariantResult = {
        name: v.name,
        bug: v.bug,
        expect: v.expect,
        selection,
        ...judge(v, outcome.failed, baselineFailed, outcome.ran),
        seconds: outcome.seconds,
        ...(note ? { note } : {}),
      }
      out(
        `${result.verdict === 'caught' ? 'caught  ' : 'MISSED  '} ${v.name}: ${VERDICT_TEXT[result.verdict]}` +
          `${result.caughtBy.length ? ` by ${result.caughtBy.join(', ')}` : ''}` +
          `${result.alsoFailed.length ? `; also ${result.alsoFailed.join(', ')}` : ''} (${result.seconds.toFixed(0)} s)`,
      )
      return result
    }),
  )

  const meta = { seed, baseline: baseline.failed }
  writeFileSync(
    join(reportDir, 'mutants.json'),
    `${JSON.stringify({ ...meta, results }, null, 2)}\n`,
  )
  writeFileSync(join(reportDir, 'mutants.md'), markdown(results, meta))
  const caught = results.filter((r) => r.verdict === 'caught').length
  out('')
  out(`mutants: ${caught} of ${results.length} caught by an expected requirement (seed ${seed})`)
  out(`reports: ${join(reportDir, 'mutants.md')}, ${join(reportDir, 'mutants.json')}`)
  if (values.keep) out(`variants and their reports kept in ${work}`)
  else rmSync(work, { recursive: true, force: true })
  return caught === results.length ? 0 : 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `conformance:mutants: ${error instanceof Error ? error.stack : String(error)}\n`,
      )
      process.exit(1)
    },
  )
}
