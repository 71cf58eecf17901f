/**
 * Acceptance of a new execution (Sessions and Turns; Limits > Concurrency, SU budgets): the checks that decide
 * whether a create request is accepted, and the scenario the execution will follow. Every acceptance of a Turn
 * or Run calls checkConcurrency() and reserveSu() (balance, then the Project's UTC day and month budgets).
 */
import type { Deps } from '../deps.js'
import { ApiError } from '../errors.js'
import type { OutputContract } from '../store/deployments.js'
import { countWaiting, openReservations } from '../store/executions.js'
import { getProject } from '../store/projects.js'
import { getFixtureScenario, takeScenario } from '../store/scenarios.js'
import { checkProjectBudget } from './ledger.js'
import { PROJECT_CONCURRENCY } from './lifecycle.js'
import { BUILTIN_SCENARIOS, DEFAULT_SCENARIO, type ScenarioStep } from './scenarios.js'

/**
 * Accepted executions beyond the 2 running ones wait; when the Project's `max_waiting_executions` (fixture
 * field, default 10) already wait, an acceptance is refused with 429 CONCURRENCY_LIMIT. Assumed: the document
 * does not say where "beyond the limit" starts.
 */
export function checkConcurrency(deps: Deps, projectId: string, running: number): void {
  const cap = getProject(deps.db, projectId)!.max_waiting_executions
  if (running >= PROJECT_CONCURRENCY && countWaiting(deps.db, projectId) >= cap) {
    throw new ApiError('CONCURRENCY_LIMIT', {
      message: `The Project runs ${PROJECT_CONCURRENCY} executions at a time and ${cap} wait already.`,
      retryAfterS: 5,
      details: { running, waiting: cap },
    })
  }
}

/**
 * Reserves an execution's max_su at acceptance: 402 INSUFFICIENT_SU when the balance minus open reservations
 * cannot cover it, else 402 PROJECT_BUDGET_EXCEEDED when it would take the Project's UTC day or month past its
 * budget (BUD-003..005). The non-retryable balance problem is reported first: waiting would not fix it.
 */
export function reserveSu(deps: Deps, projectId: string, maxSu: number): void {
  const project = getProject(deps.db, projectId)!
  const available = project.su_balance - openReservations(deps.db, projectId)
  if (available < maxSu) {
    throw new ApiError('INSUFFICIENT_SU', {
      message:
        'Not enough available SU for this execution’s budget (max_su is reserved at acceptance).',
      details: { available_su: Math.max(0, available), required_su: maxSu },
    })
  }
  checkProjectBudget(deps, projectId, maxSu)
}

/** The scenario of the next execution of a target: the queued one, else the default; steps bound to the contract. */
export function nextScenario(
  deps: Deps,
  targetId: string,
  contract: readonly OutputContract[],
): { name: string; steps: ScenarioStep[] } {
  const name = takeScenario(deps.db, targetId) ?? DEFAULT_SCENARIO
  const definition =
    BUILTIN_SCENARIOS.find((s) => s.name === name) ?? getFixtureScenario(deps.db, name)
  if (!definition) throw new Error(`queued scenario ${name} does not exist`)
  const keyFor = (which: 'required' | 'optional') =>
    contract.find((o) => o.required === (which === 'required'))?.key ?? 'result'
  const steps = definition.steps.map((s): ScenarioStep =>
    s.step === 'output' && s.output.key === undefined
      ? {
          ...s,
          output: { ...s.output, key: s.output.contract ? keyFor(s.output.contract) : 'result' },
        }
      : s,
  )
  return { name, steps }
}
