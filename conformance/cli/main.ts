#!/usr/bin/env node
/**
 * The conformance suite as one command: `npm run conformance -- [options]` (USAGE in args.ts).
 * Checks the target once, builds the world of a real target from the flags, serves the run's ledger (one pacer,
 * one spending count) to the test files, runs the vitest project "conformance" (without conformance/cli) with
 * the target in the environment, prints progress and a summary, and writes junit.xml, requirements.md and
 * requirements.json to the report directory. Exit 0 only when every selected check passed.
 */
import { randomInt } from 'node:crypto'
import { existsSync, mkdirSync, realpathSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startVitest } from 'vitest/node'
import { loadRequirements } from '../../spec/index.js'
import { CALL_RATES, RunLedger, type LedgerStats } from '../support/pace.js'
import { worldRoles } from '../support/world.js'
import { onlyPattern, parseCliArgs, UsageError, USAGE, type ParsedCliOptions } from './args.js'
import { readBaseline, writeBaseline, type BaselineComparison } from './baseline.js'
import { cancelStarted, cleanupLine, type CleanupReport } from './cleanup.js'
import { startCoordinator, type Coordinator } from './coordinator.js'
import { probeTarget, TargetError, type Probed } from './probe.js'
import { ProgressReporter } from './progress-reporter.js'
import { RequirementsReporter, type RequirementReport } from './requirements-reporter.js'
import { filesFor } from './select.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// From source: the repository's vitest.config.ts; from the package's build (dist/), its compiled copy.
const CONFIG = ['vitest.config.ts', 'vitest.config.js'].map((f) => join(ROOT, f)).find(existsSync)

/** Environment variables the suite reads for its target; the CLI sets them itself, so inherited ones go. */
const TARGET_ENV = [
  'TARGET_URL',
  'TARGET_WORLD',
  'TARGET_WORLD_JSON',
  'TARGET_API_KEY',
  'TARGET_DEPLOYMENT',
  'TARGET_WORKFLOW',
  'TARGET_OWNER_TOKEN',
  'TARGET_ALLOW_SPEND',
  'TARGET_MAX_EXECUTIONS',
  'TARGET_MAX_SU',
  'TARGET_CALL_RATES',
  'TARGET_WEBHOOK_URL',
  'TARGET_WEBHOOK_PORT',
  'CONFORMANCE_COORDINATOR',
  'FC_SEED',
  'FC_PATH',
  'FC_NUM_RUNS',
  'CONFORMANCE_STRICT',
]

/** Per-test time on a real target: paced calls wait for the call-rate window (a minute per 60 reads). */
const REAL_TEST_TIMEOUT_MS = 15 * 60_000

const out = (line: string) => process.stdout.write(`${line}\n`)
const err = (line: string) => process.stderr.write(`${line}\n`)

/** Runs the CLI with these arguments; resolves with the exit status (conformance/index.ts: run()). */
export async function main(argv: string[]): Promise<number> {
  const catalog = loadRequirements()
  let options: ParsedCliOptions
  try {
    options = parseCliArgs(
      argv,
      {
        ids: new Set(catalog.requirements.map((r) => r.id)),
        areas: new Set(Object.keys(catalog.areas)),
      },
      process.env,
    )
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    err(`conformance: ${error.message}\n\n${USAGE}`)
    return 2
  }
  if (options.help) {
    out(USAGE)
    return 0
  }

  let baseline: string[] | undefined
  if (options.baseline) {
    try {
      baseline = readBaseline(options.baseline, new Set(catalog.requirements.map((r) => r.id)))
    } catch (error) {
      err(`conformance: ${(error as Error).message}`)
      return 2
    }
  }

  // Paced at the document's call rates unless --call-rates gives the deployment's own.
  const rates = { ...CALL_RATES, ...options.callRates }
  const ledger = new RunLedger(
    {
      allow: options.allowSpend,
      maxExecutions: options.maxExecutions,
      ...(options.maxSu === undefined ? {} : { maxSu: options.maxSu }),
    },
    undefined,
    rates,
  )
  let probed: Probed | undefined
  if (options.baseUrl) {
    try {
      probed = await probeTarget({ ...options, baseUrl: options.baseUrl }, ledger)
    } catch (error) {
      if (!(error instanceof TargetError)) throw error
      err(`conformance: ${error.message}`)
      return 2
    }
  }
  const kind = probed?.kind ?? 'in-process'
  const seed = options.seed ?? randomInt(0, 2 ** 31 - 1)
  const reportDir = resolve(options.reportDir)
  mkdirSync(reportDir, { recursive: true })

  for (const name of TARGET_ENV) delete process.env[name]
  process.env.FC_SEED = String(seed)
  if (options.numRuns !== undefined) process.env.FC_NUM_RUNS = String(options.numRuns)
  process.env.CONFORMANCE_CLI = '1'
  if (options.strict !== undefined) process.env.CONFORMANCE_STRICT = options.strict ? '1' : '0'
  let coordinator: Coordinator | undefined
  if (options.baseUrl) process.env.TARGET_URL = options.baseUrl
  // The test files pace through the coordinator; the rates are also there for tests that reason about them.
  if (options.callRates) process.env.TARGET_CALL_RATES = `accept=${rates.accept},read=${rates.read}`
  if (options.controlToken) process.env.MOCK_CONTROL_TOKEN = options.controlToken
  if (probed?.kind === 'real') {
    // What the ledger (behind the coordinator) decides per request, told ahead to the tests that must know it
    // before they act (the webhook test registers an endpoint only when it may then start an execution).
    if (options.allowSpend) process.env.TARGET_ALLOW_SPEND = '1'
    coordinator = await startCoordinator(ledger)
    process.env.TARGET_WORLD_JSON = JSON.stringify(probed.world)
    process.env.CONFORMANCE_COORDINATOR = coordinator.url
  }

  // The webhook test's receiver (conformance/tests/webhooks/real-deliveries.test.ts) listens on 127.0.0.1 at this
  // port, to which the CI forwards --webhook-url; port 0: a free one, chosen here so that it can be printed.
  let webhookPort = options.webhookPort
  if (options.webhookUrl !== undefined) {
    if (webhookPort === 0) webhookPort = await freePort()
    process.env.TARGET_WEBHOOK_URL = options.webhookUrl
    process.env.TARGET_WEBHOOK_PORT = String(webhookPort)
  }

  out(`conformance: target ${kind}${options.baseUrl ? ` ${options.baseUrl}` : ''}`)
  if (options.webhookUrl !== undefined)
    out(
      kind === 'real'
        ? `conformance: webhook receiver on 127.0.0.1:${webhookPort}, reached through ${options.webhookUrl}`
        : `conformance: webhook receiver on 127.0.0.1:${webhookPort}; the target is a mock: its deliveries go to the receiver's loopback address, not to ${options.webhookUrl}`,
    )
  if (process.env.CONFORMANCE_MOCK_ROOT)
    out(`conformance: the mock under test is the copy in ${process.env.CONFORMANCE_MOCK_ROOT}`)
  out(`conformance: fast-check seed ${seed} (replay with --seed ${seed})`)
  if (options.only.length > 0) out(`conformance: only ${options.only.join(', ')}`)
  if (probed?.kind === 'mock-http' && probed.clockSet)
    out("conformance: the mock's clock was realtime: set to manual (the suite moves virtual time)")
  if (probed?.kind === 'real') {
    const roles = worldRoles(probed.world)
    out(`conformance: world from the flags: ${roles.present.join(', ')}`)
    if (roles.missing.length > 0)
      out(`conformance: missing roles (their tests are skipped): ${roles.missing.join(', ')}`)
    out(
      `conformance: paced at ${rates.accept} accept and ${rates.read} read calls per minute` +
        (options.callRates ? ' (--call-rates)' : " (the document's call rates)"),
    )
    out(
      options.allowSpend
        ? `conformance: spending allowed: at most ${options.maxExecutions} executions${options.maxSu === undefined ? '' : `, ${options.maxSu} SU`}`
        : 'conformance: no spending: tests that start executions or upload files are skipped (--allow-spend)',
    )
  }

  const progress = new ProgressReporter(out, kind !== 'in-process', kind === 'real')
  const requirements = new RequirementsReporter(
    catalog.requirements,
    {
      target: { kind, ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) },
      seed,
      only: options.only,
      catalogVersion: catalog.version,
      ...(baseline ? { baselineIds: baseline } : {}),
    },
    reportDir,
  )
  const junit = join(reportDir, 'junit.xml')
  const pattern = onlyPattern(options.only)
  // With --only, load just the files that can hold a selected test (a filter matching none when no file does).
  const files = options.only.length > 0 ? filesFor(ROOT, options.only) : []
  if (options.only.length > 0 && files.length === 0)
    files.push('conformance/cli/no-test-file-names-the-selection')
  const shared = kind !== 'in-process'
  // A real target is not reset: the executions the run started are ended at the end of the run, and when it is
  // interrupted (SIGINT, SIGTERM: then the CLI exits 130 or 143 once they are; a second signal exits at once).
  let cleanedUp: Promise<CleanupReport> | undefined
  const cleanup = (): Promise<CleanupReport> =>
    (cleanedUp ??= cancelStarted({
      baseUrl: options.baseUrl!,
      ledger,
      ...(probed?.kind === 'real' ? { fallbackKey: probed.world.keys.full } : {}),
    }).then((r) => {
      out(`conformance: ${cleanupLine(r)}`)
      for (const f of r.failed) err(`conformance: not ended: ${f}`)
      return r
    }))
  let interrupted = false
  const onSignal = (signal: NodeJS.Signals) => {
    const status = signal === 'SIGINT' ? 130 : 143
    if (interrupted) process.exit(status)
    interrupted = true
    ledger.closeSpending(`the run was interrupted (${signal})`)
    err(
      `conformance: ${signal}: stopping; ending the executions the run started (again to exit at once)`,
    )
    void cleanup()
      .catch((error: unknown) => err(`conformance: cleanup failed: ${String(error)}`))
      .finally(() => process.exit(status))
  }
  // vitest's own handlers exit at once: while the run lasts, the CLI's handler is the only one.
  const ownSignals = {
    onInit() {
      for (const sig of ['SIGINT', 'SIGTERM'] as const)
        for (const l of process.listeners(sig)) if (l !== onSignal) process.off(sig, l)
    },
  }
  if (probed?.kind === 'real') {
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  }
  let failedToRun: string | undefined
  try {
    const vitest = await startVitest(
      'test',
      files,
      {
        root: ROOT,
        config: CONFIG,
        project: ['conformance'],
        run: true,
        watch: false,
        passWithNoTests: true,
        // The CLI's and the mutation test's own tests are not part of a conformance run.
        cliExclude: ['conformance/cli/**', 'conformance/mutants/**'],
        reporters: [
          ...(probed?.kind === 'real' ? [ownSignals] : []),
          progress,
          requirements,
          ['junit', { suiteName: 'conformance' }],
          ...(options.verbose ? ['default' as const] : []),
        ],
        outputFile: { junit },
        ...(pattern ? { testNamePattern: pattern } : {}),
        // One target serves every file: the mock over HTTP is reset before each test, a real target paces
        // every call; files run one after another.
        ...(shared ? { fileParallelism: false } : {}),
        ...(kind === 'real'
          ? { testTimeout: REAL_TEST_TIMEOUT_MS, hookTimeout: REAL_TEST_TIMEOUT_MS }
          : {}),
      },
      {},
      { stdout: process.stdout, stderr: process.stderr },
    )
    await vitest.close()
  } catch (error) {
    failedToRun = error instanceof Error ? error.message : String(error)
  }
  if (probed?.kind === 'real') {
    ledger.closeSpending('the run has ended')
    try {
      await cleanup()
    } catch (error) {
      err(`conformance: cleanup failed: ${String(error)}`)
    }
  }
  const stats = await ledger.stats()
  await coordinator?.close()
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)

  if (progress.counts.unreachable) {
    err(`conformance: ${options.baseUrl ?? 'the target'}: ${progress.counts.unreachable}`)
    return 2
  }
  const report = requirements.report
  if (failedToRun || !report) {
    err(`conformance: the suite did not run: ${failedToRun ?? 'no results'}`)
    return 1
  }
  if (options.writeBaseline) {
    writeBaseline(
      options.writeBaseline,
      report.requirements.filter((r) => r.state === 'failed'),
    )
    out(`conformance: baseline of this run's failures written to ${options.writeBaseline}`)
  }
  const code = summarize(report, progress.counts.errors, kind === 'real' ? stats : undefined, {
    reportDir,
    junit,
  })
  return code
}

/** A port on 127.0.0.1 that is free now (the receiver binds it a moment later). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no free port on 127.0.0.1')
  return address.port
}

/** Prints the summary and returns the exit status. */
function summarize(
  report: RequirementReport,
  errors: readonly string[],
  stats: LedgerStats | undefined,
  files: { reportDir: string; junit: string },
): number {
  const t = report.totals
  out('')
  out(
    `tests: ${report.tests.passed} passed, ${report.tests.failed} failed, ${report.tests.skipped} skipped` +
      (errors.length > 0 ? `, ${errors.length} errors outside tests` : ''),
  )
  out(
    `requirements: ${t.passed} passed, ${t.failed} failed, ${t.partial} partial, ${t.skipped} skipped, ` +
      `${t['not-run']} not run, ${t['not-covered']} not covered (of ${report.requirements.length})`,
  )
  if (report.budget.requirements > 0)
    out(
      `left out by the budget: ${report.budget.requirements} requirements (${report.budget.tests} tests: ` +
        `${report.budget.reasons.join('; ')})`,
    )
  const failed = report.requirements.filter((r) => r.state === 'failed')
  const compared: BaselineComparison | undefined = report.baseline
  if (compared) {
    if (compared.newFailures.length > 0)
      out(`NEW failures (not in the baseline): ${compared.newFailures.join(', ')}`)
    if (compared.stillFailing.length > 0)
      out(`baselined failures (expected, do not fail the run): ${compared.stillFailing.join(', ')}`)
    if (compared.nowPassing.length > 0)
      out(
        `baselined but now PASSING (remove them from the baseline): ${compared.nowPassing.join(', ')}`,
      )
  } else if (failed.length > 0) out(`failed: ${failed.map((r) => r.id).join(', ')}`)
  // Each skipped test once (a test naming several requirements appears under each of them).
  const skippedTests = new Map<string, string>()
  for (const r of report.requirements)
    for (const x of r.tests)
      if (x.state === 'skipped' && !x.deselected && x.note)
        skippedTests.set(`${x.file} ${x.name}`, x.note)
  const reasons = new Map<string, number>()
  for (const why of skippedTests.values()) reasons.set(why, (reasons.get(why) ?? 0) + 1)
  const top = [...reasons.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8)
  if (top.length > 0) {
    out('most frequent skip reasons (tests):')
    for (const [why, n] of top) out(`  ${String(n).padStart(4)}  ${why}`)
  }
  if (stats) {
    out(
      `calls: ${stats.calls.accept} accept, ${stats.calls.read} read; paced ${(stats.pacedMs / 1000).toFixed(0)} s; ` +
        `429 resent ${stats.rateLimited}; a proxy's bare 502/503/504 resent ${stats.proxyResent}; executions ${stats.executions} (${Math.round(stats.su * 100) / 100} SU reserved), uploads ${stats.uploads}`,
    )
    for (const [why, n] of Object.entries(stats.refused)) out(`refused spending: ${n} x ${why}`)
  }
  out(`fast-check seed: ${report.seed}`)
  out(
    `reports: ${files.junit}, ${join(files.reportDir, 'requirements.md')}, ${join(files.reportDir, 'requirements.json')}, ${join(files.reportDir, 'failures.har')}`,
  )
  if (errors.length > 0) return 1
  const untaggedFailed = report.untagged.some((t) => t.state === 'failed')
  if (compared ? compared.newFailures.length > 0 || untaggedFailed : report.tests.failed > 0)
    return 1
  if (report.tests.passed === 0) {
    out('conformance: no check ran (every selected test was skipped or none was selected)')
    return 1
  }
  return 0
}

// Started as a command (tsx, node, or the package's bin link), not imported by conformance/index.ts.
function startedAsCommand(): boolean {
  try {
    return realpathSync(process.argv[1] ?? '') === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false // no script path (node -e, a REPL): imported
  }
}
if (startedAsCommand())
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      err(`conformance: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      process.exit(1)
    },
  )
