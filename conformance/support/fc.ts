/**
 * One place for fast-check settings. FC_SEED, FC_PATH (replay a failure), FC_NUM_RUNS (deeper local or nightly
 * runs) come from the environment; the defaults keep `npm test` inside the CI budget.
 */
import type { Parameters } from 'fast-check'

export function fcParams<T>(defaults: { numRuns?: number } = {}): Parameters<T> {
  const env = process.env
  const params: Parameters<T> = { numRuns: Number(env.FC_NUM_RUNS ?? defaults.numRuns ?? 25) }
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
