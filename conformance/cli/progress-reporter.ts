/**
 * Progress while the suite runs: a line per test file as it starts (HTTP targets run one file at a time) and as
 * it ends, with the count of files done, each failure as it happens, and on a real target a line per test. The counts feed the CLI's summary.
 */
import type { Reporter, TestCase, TestModule, TestSpecification, Vitest } from 'vitest/node'
import { outcomesOf } from './requirements-reporter.js'

/** Errors that say the target did not answer at all (not a wrong answer). */
const CONNECTION_ERROR =
  /\b(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|socket hang up)\b/

/** The connection error named in a test's errors, if any. */
export function connectionError(
  errors: readonly { message?: string; stack?: string }[],
): string | undefined {
  for (const e of errors) {
    const m = CONNECTION_ERROR.exec(`${e.message ?? ''}\n${e.stack ?? ''}`)
    if (m) return m[1]
  }
  return undefined
}

/** Tests failing in a row on a connection error that stop the run: the target is gone, not wrong. */
export const UNREACHABLE_AFTER = 5

export type ProgressCounts = {
  files: number
  filesDone: number
  passed: number
  failed: number
  skipped: number
  /** Files that did not load, failed hooks, errors outside tests. */
  errors: string[]
  /** Set when the run was stopped because the target stopped answering: the root cause, one line. */
  unreachable?: string
}

const area = (file: string) => file.replace(/^conformance\/(tests\/)?/, '')

export class ProgressReporter implements Reporter {
  readonly counts: ProgressCounts = {
    files: 0,
    filesDone: 0,
    passed: 0,
    failed: 0,
    skipped: 0,
    errors: [],
  }

  private vitest: Vitest | undefined
  private connectionFailures = 0

  constructor(
    private readonly write: (line: string) => void,
    private readonly announceStarts: boolean,
    /** A line per test too (a paced real target can spend minutes in one file). */
    private readonly perTest = false,
  ) {}

  onInit(vitest: Vitest) {
    this.vitest = vitest
  }

  /** Counts tests failing in a row because the target did not answer; stops the run at UNREACHABLE_AFTER. */
  private watchConnection(state: string, errors: readonly { message?: string; stack?: string }[]) {
    if (state === 'passed') this.connectionFailures = 0
    if (state !== 'failed' || this.counts.unreachable) return
    const code = connectionError(errors)
    if (!code) {
      this.connectionFailures = 0
      return
    }
    if (++this.connectionFailures < UNREACHABLE_AFTER) return
    this.counts.unreachable = `the target stopped answering (${code} in ${UNREACHABLE_AFTER} tests in a row): the run was stopped`
    this.write(`conformance: ${this.counts.unreachable}`)
    void this.vitest?.cancelCurrentRun('test-failure')
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>) {
    this.counts.files = specifications.length
    this.write(`running ${specifications.length} test files`)
  }

  onTestModuleStart(m: TestModule) {
    if (this.announceStarts)
      this.write(
        `[${this.counts.filesDone + 1}/${this.counts.files}] ${area(m.relativeModuleId)} ...`,
      )
  }

  onTestCaseResult(t: TestCase) {
    const r = t.result()
    this.watchConnection(r.state, r.state === 'failed' ? r.errors : [])
    if (this.perTest && r.state !== 'failed' && t.options.mode === 'run') {
      const seconds = ((t.diagnostic()?.duration ?? 0) / 1000).toFixed(1)
      const what = r.state === 'skipped' ? `skipped${r.note ? `: ${r.note}` : ''}` : r.state
      this.write(`  ${t.name.slice(0, 100)}: ${what} (${seconds} s)`)
    }
    if (r.state !== 'failed') return
    const message = (r.errors[0]?.message ?? 'failed').split('\n')[0]
    this.write(`  FAIL ${area(t.module.relativeModuleId)} > ${t.fullName}\n       ${message}`)
  }

  onTestModuleEnd(m: TestModule) {
    this.counts.filesDone++
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const t of outcomesOf([m])) {
      if (t.deselected) continue
      if (t.state === 'passed') passed++
      else if (t.state === 'failed') failed++
      else skipped++
    }
    this.counts.passed += passed
    this.counts.failed += failed
    this.counts.skipped += skipped
    if (m.errors().length > 0) this.watchConnection('failed', m.errors())
    for (const e of m.errors()) {
      const line = `${area(m.relativeModuleId)}: ${(e.message ?? String(e)).split('\n')[0]}`
      this.counts.errors.push(line)
      this.write(`  ERROR ${line}`)
    }
    const seconds = (m.diagnostic().duration / 1000).toFixed(1)
    const parts = [
      `${passed} passed`,
      failed ? `${failed} FAILED` : '',
      skipped ? `${skipped} skipped` : '',
    ]
    this.write(
      `[${this.counts.filesDone}/${this.counts.files}] ${area(m.relativeModuleId)}: ${parts.filter(Boolean).join(', ')} (${seconds} s)`,
    )
  }

  onTestRunEnd(
    _modules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<{ message?: string }>,
  ) {
    for (const e of unhandledErrors) {
      const line = `unhandled: ${(e.message ?? String(e)).split('\n')[0]}`
      this.counts.errors.push(line)
      this.write(`  ERROR ${line}`)
    }
  }
}
