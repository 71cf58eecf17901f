/**
 * GET /v1/usage (Usage and works; Usage cost category): the Project's SU usage, or with filters that of one
 * Deployment, Session, Turn or Run, by cost category (CostCategoryUsage), and since 1.3.0 the works
 * preparations' usage (null with any filter). Settled spend comes from the SU ledger, open executions add
 * what they spent so far (settled calls) and what they still reserve; status is PENDING while any matching
 * execution is unsettled.
 */
import type { Context, Hono } from 'hono'
import type { Deps, Env } from '../deps.js'
import { COST_CATEGORIES, EXECUTION_SHARES, roundSu, splitByCategory } from '../domain/budgets.js'
import { PREPARATION_SU } from '../domain/preparation.js'
import { ApiError } from '../errors.js'
import { route } from '../http/route.js'
import type { Schema, TypedRequest } from '../http/typed.js'
import { getDeployment } from '../store/deployments.js'
import { getExecution, getSession } from '../store/executions.js'
import { openSpend, settledByCategory, type UsageFilter } from '../store/usage.js'
import { countPreparationsByReadiness } from '../store/works.js'

type CategoryUsage = Schema<'CostCategoryUsage'>

const notFound = (what: string) =>
  new ApiError('NOT_FOUND', { message: `No such ${what} (or it is outside this key's access).` })

/**
 * The filters of the request, each naming a resource the key may see, else 404 NOT_FOUND (existence not
 * revealed; AUTH rule 5). A Deployment, Session or Turn must be of a Deployment the key may call; a Run must
 * be of the key's Project. Deleted Sessions and Runs still answer: billing identifiers are kept (Deletion).
 */
function visibleFilter(c: Context<Env>, req: TypedRequest<'getUsage'>): UsageFilter {
  const { db } = c.var.deps
  const auth = req.auth
  const q = req.query
  const callable = (deploymentId: string | null) =>
    deploymentId !== null && auth.deploymentIds.includes(deploymentId)
  if (q.deployment_id !== undefined) {
    const d = getDeployment(db, q.deployment_id)
    if (d?.project_id !== auth.projectId || !callable(d.id)) throw notFound('Deployment')
  }
  if (q.session_id !== undefined) {
    const s = getSession(db, q.session_id)
    if (s?.project_id !== auth.projectId || !callable(s.deployment_id)) throw notFound('Session')
  }
  if (q.turn_id !== undefined) {
    const t = getExecution(db, q.turn_id)
    if (t?.kind !== 'TURN' || t.project_id !== auth.projectId || !callable(t.deployment_id))
      throw notFound('Turn')
  }
  if (q.run_id !== undefined) {
    const r = getExecution(db, q.run_id)
    if (r?.kind !== 'RUN' || r.project_id !== auth.projectId) throw notFound('Run')
  }
  return q
}

/**
 * The usage body for a Project and filter at the current virtual time. settled_su and reserved_su are not
 * among the documented UsageResponse fields (the schema allows more).
 */
export function usageBody(
  deps: Deps,
  projectId: string,
  filter: UsageFilter,
): Schema<'UsageResponse'> & { settled_su: number; reserved_su: number } {
  const settled = settledByCategory(deps.db, projectId, filter)
  const open = openSpend(deps.db, projectId, filter)
  const openSpent = splitByCategory(open.reduce((s, e) => s + e.spent_su, 0))
  const openReserved = splitByCategory(open.reduce((s, e) => s + e.reserved_su, 0))
  const pending = open.length > 0
  const categories: Record<string, CategoryUsage> = {}
  for (const name of COST_CATEGORIES) {
    // An unsettled execution keeps the categories it is charged to PENDING (assumed shares, budgets.ts).
    const categoryPending = pending && EXECUTION_SHARES[name] > 0
    const settledSu = roundSu((settled.get(name) ?? 0) + openSpent[name])
    categories[name] = {
      status: categoryPending ? 'PENDING' : 'FINAL',
      total_su: categoryPending ? null : settledSu,
      settled_su: settledSu,
      reserved_su: roundSu(openReserved[name]),
    }
  }
  const settledSu = roundSu(COST_CATEGORIES.reduce((s, n) => s + categories[n]!.settled_su, 0))
  const reservedSu = roundSu(COST_CATEGORIES.reduce((s, n) => s + categories[n]!.reserved_su, 0))
  const filtered = Object.values(filter).some((v) => v !== undefined)
  return {
    status: pending ? 'PENDING' : 'FINAL',
    total_su: pending ? null : settledSu,
    settled_su: settledSu,
    reserved_su: reservedSu,
    categories,
    // USAGE-004: null when filtered by deployment_id, session_id, turn_id or run_id.
    preparations: filtered ? null : preparationsUsage(deps, projectId),
  }
}

/** The works preparations' usage (assumed shape: the CostCategoryUsage fields and a count). */
function preparationsUsage(deps: Deps, projectId: string): CategoryUsage & { count: number } {
  const { ready, preparing } = countPreparationsByReadiness(deps.db, projectId, deps.clock.nowMs())
  const settledSu = roundSu(ready * PREPARATION_SU)
  return {
    status: preparing > 0 ? 'PENDING' : 'FINAL',
    total_su: preparing > 0 ? null : settledSu,
    settled_su: settledSu,
    reserved_su: roundSu(preparing * PREPARATION_SU),
    count: ready + preparing,
  }
}

export function usageRoutes(app: Hono<Env>): void {
  route(app, 'getUsage', (c, req) => ({
    status: 200,
    body: usageBody(c.var.deps, req.auth.projectId, visibleFilter(c, req)),
  }))
}
