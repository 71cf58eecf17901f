/**
 * Run rules as pure functions (Workflows and Runs; States and transitions; Limits): JSON limits of Run input,
 * how a Run ends from its frozen result contract and the outputs produced, progress, retention and queue time.
 */

const DAY_MS = 24 * 60 * 60 * 1000

/** Run request rule 1: Run input nested deeper than this is refused (OUTPUT_LIMIT_EXCEEDED). */
export const INPUT_MAX_DEPTH = 16
/** Run request rule 1: more array elements than this, counted over every array of the input, are refused. */
export const INPUT_MAX_ARRAY_ELEMENTS = 10_000
/** Limits > Time limits: the queue time of all steps of one Run together. */
export const RUN_QUEUE_TOTAL_S = 3600
/** Retention: Run content is kept 30 days after the Run ends unless retention_days shortens it. */
export const DEFAULT_RETENTION_DAYS = 30

export type JsonLimitProblem =
  { reason: 'DEPTH'; max_depth: number } | { reason: 'ARRAY_ELEMENTS'; max_array_elements: number }

/**
 * RUN-026, RUN-027: whether a JSON value breaks the JSON limits. Depth counts containers: {} is depth 1,
 * {"a":{}} depth 2, a scalar depth 0; array elements are summed over every array at any depth.
 * Iterative, so a hostile nesting cannot overflow the stack.
 */
export function jsonLimitProblem(value: unknown): JsonLimitProblem | undefined {
  let elements = 0
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }]
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    const d = depth + 1
    if (d > INPUT_MAX_DEPTH) return { reason: 'DEPTH', max_depth: INPUT_MAX_DEPTH }
    if (Array.isArray(v)) {
      elements += v.length
      if (elements > INPUT_MAX_ARRAY_ELEMENTS)
        return { reason: 'ARRAY_ELEMENTS', max_array_elements: INPUT_MAX_ARRAY_ELEMENTS }
      for (const x of v) stack.push({ v: x, depth: d })
    } else {
      for (const x of Object.values(v)) stack.push({ v: x, depth: d })
    }
  }
  return undefined
}

/** What the end rules need of one produced output item. */
export type ProducedOutput = { key: string; error: { code: string } | null }
export type ContractEntry = { key: string; required: boolean }

export type RunEnd =
  | { status: 'SUCCEEDED' | 'PARTIALLY_SUCCEEDED' }
  | { status: 'FAILED'; code: string; message: string }

/**
 * How a Run that finished its work ends (STATE-016, STATE-017, STATE-018, STATE-028; state rule 5):
 * - a required output failed a result rule: FAILED with that rule's code;
 * - a required output is missing: FAILED OUTPUT_MISSING, never SUCCEEDED;
 * - an optional output failed: PARTIALLY_SUCCEEDED when the publication allows partial results (the code
 *   stays on the output item), else FAILED with that code;
 * - otherwise SUCCEEDED.
 */
export function runEnd(
  contract: readonly ContractEntry[],
  allowsPartial: boolean,
  produced: readonly ProducedOutput[],
): RunEnd {
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

/** RET-010: Run content is kept retention_days after the Run ends; null while it runs. */
export const runExpiresAt = (completedAt: number | null, retentionDays: number): number | null =>
  completedAt === null ? null : completedAt + retentionDays * DAY_MS

/** Whether a Run's content is past retention at `nowMs` (hidden at read time; reading never extends it). */
export const runContentExpired = (
  completedAt: number | null,
  retentionDays: number,
  nowMs: number,
): boolean => {
  const at = runExpiresAt(completedAt, retentionDays)
  return at !== null && nowMs >= at
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
