/**
 * The steps of a Run as pure rules (Run: progress; Workflows and Runs, request rule 2; Limits > Time limits):
 * which step is open, which unique steps are done (progress.completed, a retry not counted again), and how long
 * the Run has waited queued (a step's wait is bounded by runQueueWindowS of run.ts). The executor
 * (execution/executor.ts) applies them on the clock.
 */
/** The step outcomes a script may end a step with; a step open at the Run's end takes the Run's. */
export const STEP_END_STATUSES = ['SUCCEEDED', 'FAILED'] as const
export type StepOutcomeStatus = 'SUCCEEDED' | 'FAILED' | 'CANCELED' | 'EXPIRED'

/** What a Run has done of its steps so far (stored with the Run). */
export type RunStepState = {
  /** The step under way (null between steps); started_at is null while it waits queued. */
  open: { id: string; started_at: number | null } | null
  /** Unique step ids that ended SUCCEEDED, in order: progress.completed is their count (RUN-008). */
  done: string[]
  /** Milliseconds the Run's later steps waited queued (its first wait is created_at -> started_at). */
  queued_ms: number
}

export const NO_STEPS: RunStepState = { open: null, done: [], queued_ms: 0 }

/** TIME-001: seconds the Run has waited queued in all: before it started, plus each later step's wait. */
export const queuedSoFarS = (
  state: RunStepState,
  createdAtMs: number,
  startedAtMs: number | null,
  nowMs: number,
): number => ((startedAtMs ?? nowMs) - createdAtMs + state.queued_ms) / 1000

/** A step begins (queued when `queued` is true: it starts running later). */
export const openStep = (
  state: RunStepState,
  id: string,
  nowMs: number,
  queued: boolean,
): RunStepState => ({ ...state, open: { id, started_at: queued ? null : nowMs } })

/** The open step, done waiting queued for `waitedMs`, starts running now. */
export const runOpenStep = (state: RunStepState, nowMs: number, waitedMs: number): RunStepState =>
  state.open
    ? {
        ...state,
        open: { ...state.open, started_at: nowMs },
        queued_ms: state.queued_ms + waitedMs,
      }
    : state

/**
 * The open step ends with a status. RUN-007, RUN-008: progress counts unique steps that succeeded, so a retry
 * of a step (the same id again after a FAILED end) adds nothing until it succeeds, and then only once.
 */
export function closeStep(
  state: RunStepState,
  status: StepOutcomeStatus,
): { state: RunStepState; stepId: string } | undefined {
  if (!state.open) return undefined
  const id = state.open.id
  const done = status === 'SUCCEEDED' && !state.done.includes(id) ? [...state.done, id] : state.done
  return { state: { ...state, open: null, done }, stepId: id }
}

/** The outcome of a step still open when its Run ends: the Run's status (a partial success is a success). */
export const stepStatusAtRunEnd = (runStatus: string): StepOutcomeStatus =>
  runStatus === 'SUCCEEDED' || runStatus === 'PARTIALLY_SUCCEEDED'
    ? 'SUCCEEDED'
    : runStatus === 'CANCELED' || runStatus === 'EXPIRED'
      ? runStatus
      : 'FAILED'
