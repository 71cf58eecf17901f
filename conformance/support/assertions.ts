/**
 * The two kinds of assertion, by construction (the suite tests the document, not the mock):
 *
 *   expect(...)                         a document rule: asserted on every target, real deployments included
 *   await mockChoice(target, what, fn)  a mock choice (an `x-assumed` mark of spec/openapi.yaml or a part the
 *                                       document does not show): asserted on a mock; on a real target the
 *                                       same assertions run and a failure is a warning ("the target chose
 *                                       otherwise"), never a failure
 *
 * So holding a real target to a choice of this mock takes a visible act: writing the assertion inside
 * mockChoice is the only way to assert a choice, and a plain expect is a claim that the document says so.
 * A test whose whole subject is a mock choice skips on a real target instead (skip.ts: assumedRule).
 */
import type { Target } from './target.js'
import { warn } from './warnings.js'

/** Whether mock choices are asserted (a mock target) or only reported (a real target). */
export const assertsMockChoices = (target: Pick<Target, 'kind'>): boolean => target.kind !== 'real'

/**
 * Runs `assert`: on a mock its failure fails the test; on a real target it becomes a warning naming `what`
 * (the choice, e.g. "x-assumed: the cancel answer is the full Run read").
 */
export async function mockChoice(
  target: Pick<Target, 'kind'>,
  what: string,
  assert: () => void | Promise<void>,
): Promise<void> {
  if (assertsMockChoices(target)) return assert()
  try {
    await assert()
  } catch (error) {
    const first = (error instanceof Error ? error.message : String(error)).split('\n')[0]
    warn(`mock choice: ${what}`, `the target made another choice than the mock (${what}): ${first}`)
  }
}
