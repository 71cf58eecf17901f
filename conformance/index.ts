/**
 * The package's `./conformance` entry: the conformance suite run programmatically, exactly as the CLI
 * (`npx ai-employee-conformance`, conformance/cli/main.ts) runs it. Each option is the CLI flag of the same
 * name (conformance/cli/args.ts, USAGE); the run prints its progress to stdout and writes its reports to
 * `reportDir`, and resolves with the CLI's exit status (0 every selected check passed, 1 a check failed or
 * none ran, 2 bad options or the target cannot be used).
 *
 * A run sets the suite's environment variables (TARGET_URL, FC_SEED, ...) in this process for the test
 * workers it starts; run one at a time.
 * @example
 *   import { run } from 'ai-employee-mock/conformance'
 *   const status = await run({ baseUrl: 'http://127.0.0.1:4010', only: ['SES', 'AUTH-001'] })
 *   // a test deployment with other call rates: callRates: { accept: 5, read: 30 } (--call-rates accept=5,read=30)
 */
import type { CliOptions } from './cli/args.js'
import { main } from './cli/main.js'

/** The CLI's options (conformance/cli/args.ts, each documented in USAGE), all optional. */
export type RunOptions = Partial<Omit<CliOptions, 'only' | 'help'>> & {
  /** Requirement ids or areas (SES-022, AUTH). */
  only?: readonly string[]
}

/**
 * Each option's CLI flag: string and number options take a value, boolean ones are present or not (`strict`:
 * true is --strict, false --lenient).
 */
const FLAGS: { [K in keyof Required<RunOptions>]: string } = {
  baseUrl: '--base-url',
  apiKey: '--api-key',
  deployment: '--deployment',
  workflow: '--workflow',
  ownerToken: '--owner-token',
  world: '--world',
  controlToken: '--control-token',
  allowSpend: '--allow-spend',
  maxExecutions: '--max-executions',
  maxSu: '--max-su',
  callRates: '--call-rates',
  only: '--only',
  seed: '--seed',
  numRuns: '--num-runs',
  reportDir: '--report-dir',
  baseline: '--baseline',
  writeBaseline: '--write-baseline',
  strict: '--strict',
  verbose: '--verbose',
}

/** The CLI arguments that stand for these options. */
export function toArgv(options: RunOptions): string[] {
  const argv: string[] = []
  for (const [name, flag] of Object.entries(FLAGS) as [keyof RunOptions, string][]) {
    const value = options[name]
    if (name === 'strict' && value === false) argv.push('--lenient')
    if (value === undefined || value === false) continue
    if (value === true) argv.push(flag)
    else if (name === 'callRates' && typeof value === 'object') {
      if (Object.keys(value).length > 0)
        argv.push(
          flag,
          Object.entries(value)
            .map(([cls, n]) => `${cls}=${String(n)}`)
            .join(','),
        )
    } else if (Array.isArray(value)) for (const v of value as string[]) argv.push(flag, v)
    else argv.push(flag, String(value))
  }
  return argv
}

/** Runs the suite; resolves with the exit status. */
export function run(options: RunOptions = {}): Promise<number> {
  return main(toArgv(options))
}
