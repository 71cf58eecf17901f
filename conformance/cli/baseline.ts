/**
 * The expected-failures baseline: requirement ids a deployment is known not to meet yet. With --baseline, a run
 * fails only on failures outside it, and the report names baselined requirements that now pass (to be removed
 * from the file). The file is text: one or more ids per line, `#` starts a comment; --write-baseline writes one
 * from a run's failures, each with its rule as a comment.
 */
import { readFileSync, writeFileSync } from 'node:fs'

export type BaselineComparison = {
  /** Failed and not in the baseline: these fail the run. */
  newFailures: string[]
  /** Failed and in the baseline. */
  stillFailing: string[]
  /** In the baseline and passed in this run (remove them from the file). */
  nowPassing: string[]
}

/** The requirement ids of a baseline file's text. */
export function parseBaseline(text: string): string[] {
  const ids = new Set<string>()
  for (const line of text.split(/\r?\n/))
    for (const m of line.replace(/#.*$/, '').matchAll(/\b[A-Z]+-\d{3}\b/g)) ids.add(m[0])
  return [...ids]
}

/** Reads a baseline file; unknown ids are an error (a typo would hide nothing and excuse nothing). */
export function readBaseline(path: string, known: ReadonlySet<string>): string[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new Error(`cannot read the baseline ${path}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  const ids = parseBaseline(text)
  const unknown = ids.filter((id) => !known.has(id))
  if (unknown.length > 0)
    throw new Error(
      `the baseline ${path} names ids not in spec/requirements.yaml: ${unknown.join(', ')}`,
    )
  return ids
}

/** How a run's requirement states compare with the baseline. */
export function compareWithBaseline(
  states: readonly { id: string; state: string }[],
  baseline: readonly string[],
): BaselineComparison {
  const known = new Set(baseline)
  return {
    newFailures: states.filter((r) => r.state === 'failed' && !known.has(r.id)).map((r) => r.id),
    stillFailing: states.filter((r) => r.state === 'failed' && known.has(r.id)).map((r) => r.id),
    nowPassing: states.filter((r) => r.state === 'passed' && known.has(r.id)).map((r) => r.id),
  }
}

/** A baseline file's text for a run's failures. */
export const baselineText = (failed: readonly { id: string; rule: string }[]): string =>
  [
    '# Expected failures: requirement ids this deployment does not meet yet (npm run conformance -- --baseline <file>).',
    '# A run fails only on failures not listed here; remove an id once the report says it passes.',
    ...failed.map((r) => `${r.id}  # ${r.rule.replace(/\s+/g, ' ').slice(0, 120)}`),
    '',
  ].join('\n')

export const writeBaseline = (
  path: string,
  failed: readonly { id: string; rule: string }[],
): void => writeFileSync(path, baselineText(failed))
