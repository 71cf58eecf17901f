/**
 * Run rules as pure functions (Workflows and Runs; States and transitions; Limits): how a Run ends from its
 * frozen result contract and the outputs produced, progress and queue time. The JSON limits of Run input are
 * in json-limits.ts, Run retention in retention.ts.
 */

/** Limits > Time limits: the queue time of all steps of one Run together. */
export const RUN_QUEUE_TOTAL_S = 3600

/** What the end rules need of one produced output item (C: the type of its error codes). */
export type ProducedOutput<C extends string = string> = { key: string; error: { code: C } | null }
export type ContractEntry = { key: string; required: boolean }

export type RunEnd<C extends string = string> =
  | { status: 'SUCCEEDED' | 'PARTIALLY_SUCCEEDED' }
  | { status: 'FAILED'; code: C | 'OUTPUT_MISSING'; message: string }

/**
 * How a Run that finished its work ends (STATE-016, STATE-017, STATE-018, STATE-028; state rule 5):
 * - a required output failed a result rule: FAILED with that rule's code;
 * - a required output is missing: FAILED OUTPUT_MISSING, never SUCCEEDED;
 * - an optional output failed: PARTIALLY_SUCCEEDED when the publication allows partial results (the code
 *   stays on the output item), else FAILED with that code;
 * - otherwise SUCCEEDED.
 */
export function runEnd<C extends string>(
  contract: readonly ContractEntry[],
  allowsPartial: boolean,
  produced: readonly ProducedOutput<C>[],
): RunEnd<C> {
  const required = new Set(contract.filter((c) => c.required).map((c) => c.key))
  const failed = produced.filter((o) => o.error !== null)
  const failedRequired = failed.find((o) => required.has(o.key))
  if (failedRequired) {
    return {
      status: 'FAILED',
      code: failedRequired.error!.code,
      message: `The required output "${failedRequired.key}" broke a result rule.`,
    }
  }
  const good = new Set(produced.filter((o) => o.error === null).map((o) => o.key))
  const missing = [...required].filter((k) => !good.has(k))
  if (missing.length > 0) {
    return {
      status: 'FAILED',
      code: 'OUTPUT_MISSING',
      message: `Required output(s) not produced: ${missing.join(', ')}.`,
    }
  }
  const failedOptional = failed[0]
  if (failedOptional) {
    if (allowsPartial) return { status: 'PARTIALLY_SUCCEEDED' }
    return {
      status: 'FAILED',
      code: failedOptional.error!.code,
      message: `The output "${failedOptional.key}" broke a result rule and the workflow does not allow partial results.`,
    }
  }
  return { status: 'SUCCEEDED' }
}

/**
 * TIME-001: how long a Run may wait in the queue now: its step's queue_seconds, but never past the whole-Run
 * total of 3,600 seconds less what its earlier steps already waited.
 */
export const runQueueWindowS = (queueSeconds: number, alreadyQueuedS: number): number =>
  Math.max(0, Math.min(queueSeconds, RUN_QUEUE_TOTAL_S - alreadyQueuedS))

/** RUN-007, RUN-008: the next progress count after one step is done; unique steps, never past total. */
export const progressAfterStep = (completed: number, total: number): number =>
  Math.min(completed + 1, total)
