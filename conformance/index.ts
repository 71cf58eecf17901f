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
 */
import { main } from './cli/main.js'

export type RunOptions = {
  /** The service to test; default: the mock in this process. */
  baseUrl?: string
  /** An API key with every scope (real targets). */
  apiKey?: string
  deployment?: string
  workflow?: string
  /** The owner login token (webhook management). */
  ownerToken?: string
  /** A world file giving further roles (conformance/support/world.ts). */
  world?: string
  /** The mock's control-API token, when it was started with one. */
  controlToken?: string
  /** Real targets: let tests start executions and upload files. */
  allowSpend?: boolean
  maxExecutions?: number
  maxSu?: number
  /** Requirement ids or areas (SES-022, AUTH). */
  only?: readonly string[]
  /** fast-check seed; the same seed replays the run. */
  seed?: number
  /** fast-check examples per property. */
  numRuns?: number
  /** Where junit.xml, requirements.md and requirements.json go (default ./conformance-report). */
  reportDir?: string
  /** vitest's own report as well. */
  verbose?: boolean
}

/** Each option's CLI flag: string and number options take a value, boolean ones are present or not. */
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
  only: '--only',
  seed: '--seed',
  numRuns: '--num-runs',
  reportDir: '--report-dir',
  verbose: '--verbose',
}

/** The CLI arguments that stand for these options. */
export function toArgv(options: RunOptions): string[] {
  const argv: string[] = []
  for (const [name, flag] of Object.entries(FLAGS) as [keyof RunOptions, string][]) {
    const value = options[name]
    if (value === undefined || value === false) continue
    if (value === true) argv.push(flag)
    else if (Array.isArray(value)) for (const v of value as string[]) argv.push(flag, v)
    else argv.push(flag, String(value))
  }
  return argv
}

/** Runs the suite; resolves with the exit status. */
export function run(options: RunOptions = {}): Promise<number> {
  return main(toArgv(options))
}
