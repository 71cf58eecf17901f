/**
 * Progress while the suite runs: a line per test file as it starts (HTTP targets run one file at a time) and as
 * it ends, with the count of files done, each failure as it happens, and on a real target a line per test. The counts feed the CLI's summary.
 */
import type { Reporter, TestCase, TestModule, TestSpecification } from 'vitest/node'
import { outcomesOf } from './requirements-reporter.js'

export type ProgressCounts = {
  files: number
  filesDone: number
  passed: number
  failed: number
  skipped: number
  /** Files that did not load, failed hooks, errors outside tests. */
  errors: string[]
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

  constructor(
    private readonly write: (line: string) => void,
    private readonly announceStarts: boolean,
    /** A line per test too (a paced real target can spend minutes in one file). */
    private readonly perTest = false,
  ) {}

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
