/**
 * One place for fast-check settings. FC_SEED, FC_PATH (replay a failure), FC_NUM_RUNS (deeper local or nightly
 * runs) come from the environment; the defaults keep `npm test` inside the CI budget. On a real target every
 * example is a paced call (an upload or a creation takes one of the document's 10 Accept slots a minute), so
 * a property runs at most REAL_TARGET_NUM_RUNS examples there unless FC_NUM_RUNS (--num-runs) asks for more:
 * the same rule on fewer drawn examples, and a paced run within its half hour.
 */
import type { Parameters } from 'fast-check'
import { targetKindFromEnv } from './strictness.js'

/** Examples per property on a real target when FC_NUM_RUNS is not set. */
export const REAL_TARGET_NUM_RUNS = 5

/** The number of examples of a property whose default is `numRuns`, for the target the environment names. */
export function numRunsFor(env: NodeJS.ProcessEnv, numRuns = 25): number {
  if (env.FC_NUM_RUNS) return Number(env.FC_NUM_RUNS)
  return targetKindFromEnv(env) === 'real' ? Math.min(numRuns, REAL_TARGET_NUM_RUNS) : numRuns
}

export function fcParams<T>(defaults: { numRuns?: number } = {}): Parameters<T> {
  const env = process.env
  const params: Parameters<T> = { numRuns: numRunsFor(env, defaults.numRuns) }
  if (env.FC_SEED) params.seed = Number(env.FC_SEED)
  if (env.FC_PATH) params.path = env.FC_PATH
  return params
}

/**
 * Settings for fc.commands: FC_REPLAY_PATH replays a model-based counterexample. `size: 'medium'` makes
 * sequences long enough to reach states that need several steps (two running executions and a third waiting).
 */
export function commandsParams(maxCommands = 30): {
  maxCommands: number
  size: 'medium'
  replayPath?: string
} {
  const base = { maxCommands, size: 'medium' as const }
  return process.env.FC_REPLAY_PATH ? { ...base, replayPath: process.env.FC_REPLAY_PATH } : base
}
