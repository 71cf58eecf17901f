/**
 * What the two self-tests share (the mutation self-test, run.ts, and the benign-implementation self-test,
 * ../benign/run.ts): running the conformance CLI in a child process against a copy of the mock
 * (CONFORMANCE_MOCK_ROOT), in mock mode (the copy in process with its control API) or in real-deployment mode
 * (CONFORMANCE_REHEARSAL=real: the copy dressed as a real deployment, no control API, no reset, call rates
 * off and unpaced, and --lenient as against a real deployment), reading the run's requirements.json, and a
 * small pool that runs a few such runs at once.
 */
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = join(ROOT, 'conformance/cli/main.ts')

/** How the copy is served: `mock` (in process, control API) or `real` (rehearsal: a real deployment's view). */
export type Mode = 'mock' | 'real'

/** A test that failed in a run (from requirements.json; untagged tests have no ids). */
export type FailedTest = { file: string; name: string; ids: string[]; error?: string }

export type RunOutcome = {
  /** Requirement ids whose state is failed. */
  failed: string[]
  /** The failed tests, each once. */
  failedTests: FailedTest[]
  ran: boolean
  log: string
  seconds: number
}

/** The areas of requirement ids (SES-001 -> SES). */
export const areasOf = (ids: readonly string[]): string[] => [
  ...new Set(ids.map((id) => id.replace(/-\d{3}$/, ''))),
]

/**
 * The call-rate checks fail in real-deployment mode by design: the rehearsal turns call rates off
 * (support/target.ts), so a burst is never refused. A failed test naming only RATE ids is not counted there.
 */
export const failsInRehearsalByDesign = (t: Pick<FailedTest, 'ids'>): boolean =>
  t.ids.length > 0 && t.ids.every((id) => id.startsWith('RATE-'))

/** A test's identity across runs. */
export const testKey = (t: Pick<FailedTest, 'file' | 'name'>): string => `${t.file} > ${t.name}`

type Report = {
  requirements: {
    id: string
    state: string
    tests: { file: string; name: string; state: string; error?: string }[]
  }[]
  untagged?: { file: string; name: string; state: string; error?: string }[]
}

/** The failed requirement ids and failed tests of a requirements.json. */
export function failuresOf(report: Report): Pick<RunOutcome, 'failed' | 'failedTests'> {
  const failed = report.requirements.filter((r) => r.state === 'failed').map((r) => r.id)
  const tests = new Map<string, FailedTest>()
  const note = (t: Report['requirements'][number]['tests'][number], id?: string) => {
    if (t.state !== 'failed') return
    const key = testKey(t)
    const known = tests.get(key) ?? {
      file: t.file,
      name: t.name,
      ids: [],
      ...(t.error ? { error: t.error } : {}),
    }
    if (id && !known.ids.includes(id)) known.ids.push(id)
    tests.set(key, known)
  }
  for (const r of report.requirements) for (const t of r.tests) note(t, r.id)
  for (const t of report.untagged ?? []) note(t)
  return { failed, failedTests: [...tests.values()] }
}

/** The environment of a child run: the parent's without its own target and test-runner variables. */
function childEnv(mockRoot: string, mode: Mode): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !k.startsWith('VITEST') &&
        !k.startsWith('TARGET_') &&
        !k.startsWith('FC_') &&
        k !== 'CONFORMANCE_REHEARSAL' &&
        k !== 'CONFORMANCE_STRICT',
    ),
  )
  return {
    ...env,
    CONFORMANCE_MOCK_ROOT: mockRoot,
    FORCE_COLOR: '0',
    ...(mode === 'real' ? { CONFORMANCE_REHEARSAL: 'real' } : {}),
  }
}

/** Runs the conformance CLI in a child process against the mock copy at `mockRoot`. */
export function runSuite(opts: {
  mockRoot: string
  /** Requirement ids or areas (empty: the whole suite). */
  selection: readonly string[]
  seed: number
  reportDir: string
  mode: Mode
}): Promise<RunOutcome> {
  const { mockRoot, selection, seed, reportDir, mode } = opts
  const args = [
    '--import',
    'tsx',
    CLI,
    ...(selection.length > 0 ? ['--only', selection.join(',')] : []),
    '--seed',
    String(seed),
    '--report-dir',
    reportDir,
    // A real deployment is read leniently by default (strictness.ts); the rehearsal has no TARGET_URL, so
    // the CLI is told.
    ...(mode === 'real' ? ['--lenient'] : []),
  ]
  const started = process.hrtime.bigint()
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: childEnv(mockRoot, mode),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout.on('data', (d: Buffer) => (log += d.toString()))
    child.stderr.on('data', (d: Buffer) => (log += d.toString()))
    child.on('error', fail)
    child.on('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      writeFileSync(join(reportDir, 'run.log'), log)
      try {
        const report = JSON.parse(
          readFileSync(join(reportDir, 'requirements.json'), 'utf8'),
        ) as Report
        done({ ...failuresOf(report), ran: true, log, seconds })
      } catch {
        done({ failed: [], failedTests: [], ran: false, log, seconds })
      }
    })
  })
}

/** Runs `tasks` with at most `jobs` at once, in order of start. */
export async function pool<T>(jobs: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
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

/** Runs `main` when the module at `url` is the started script; its resolved value is the exit status. */
export function runAsScript(url: string, name: string, main: (argv: string[]) => Promise<number>) {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(url)) return
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof Error ? error.stack : String(error)}\n`)
      process.exit(1)
    },
  )
}
