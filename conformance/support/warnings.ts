/**
 * Findings that do not fail a check: an undocumented response field when the suite is not strict
 * (support/strictness.ts). Each distinct warning is printed once with console.warn and kept for warnings(),
 * for a runner to report. Vitest gives each test file its own module scope, so the list holds the warnings
 * of the current test file.
 */
import { expect } from 'vitest'

export type Warning = {
  /** What makes two warnings the same one, e.g. "getRun 200: run.new_field". */
  key: string
  message: string
  /** The test that met it first, when known. */
  test?: string
}

const recorded = new Map<string, Warning>()
/** The warnings first met by the current test (setup.ts moves them into the test's meta). */
const ofTest: Warning[] = []

/** Records a warning and prints it, once per key. */
export function warn(key: string, message: string): void {
  if (recorded.has(key)) return
  const test = expect.getState().currentTestName
  const warning = { key, message, ...(test ? { test } : {}) }
  recorded.set(key, warning)
  ofTest.push(warning)
  console.warn(`conformance warning: ${message}${test ? `\n  (first met in: ${test})` : ''}`)
}

/** The warnings recorded so far, in the order they were first met. */
export const warnings = (): readonly Warning[] => [...recorded.values()]

/** The warnings first met since the last call (the current test's). */
export const takeTestWarnings = (): Warning[] => ofTest.splice(0, ofTest.length)

/** Forgets the recorded warnings (tests of the warning machinery). */
export function clearWarnings(): void {
  recorded.clear()
  ofTest.length = 0
}
