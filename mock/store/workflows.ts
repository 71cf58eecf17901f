/**
 * Workflows: prepared statements and row <-> domain mapping (published version, availability, input schema,
 * result contract, limits and the publication facts the Run engine needs: steps, partial results, approval).
 */
import type { ErrorCode } from '../../spec/index.js'
import type { OrganizationData } from '../domain/organization-data.js'
import type { Db } from './db.js'
import type { OutputContract } from './deployments.js'

export type WorkflowLimits = {
  run_seconds: number
  execution_seconds: number
  queue_seconds: number
  max_su: number
  retention_days: number
}

export type Workflow = {
  id: string
  project_id: string
  name: string
  published_version: number
  available: boolean
  /** Set when available is false (for example WORKFLOW_UNAVAILABLE). */
  error_code: ErrorCode | null
  input_schema: Record<string, unknown>
  outputs: OutputContract[]
  limits: WorkflowLimits
  /** Number of unique steps (Run progress.total). */
  steps: number
  allows_partial: boolean
  needs_approval: boolean
  /** Its organization data (grant, uses, store reachable); null when it uses none. */
  organization_data: OrganizationData | null
}

type WorkflowRow = {
  id: string
  position: number
  project_id: string
  name: string
  published_version: number
  available: number
  error_code: ErrorCode | null
  input_schema_json: string
  outputs_json: string
  limits_json: string
  steps: number
  allows_partial: number
  needs_approval: number
  organization_data_json: string | null
}

const toWorkflow = (r: WorkflowRow): Workflow => ({
  id: r.id,
  project_id: r.project_id,
  name: r.name,
  published_version: r.published_version,
  available: r.available === 1,
  error_code: r.error_code,
  input_schema: JSON.parse(r.input_schema_json) as Record<string, unknown>,
  outputs: JSON.parse(r.outputs_json) as OutputContract[],
  limits: JSON.parse(r.limits_json) as WorkflowLimits,
  steps: r.steps,
  allows_partial: r.allows_partial === 1,
  needs_approval: r.needs_approval === 1,
  organization_data:
    r.organization_data_json === null
      ? null
      : (JSON.parse(r.organization_data_json) as OrganizationData),
})

export function insertWorkflow(db: Db, w: Workflow, position: number): void {
  db.stmt(
    `INSERT INTO workflows (id, position, project_id, name, published_version, available, error_code,
       input_schema_json, outputs_json, limits_json, steps, allows_partial, needs_approval,
       organization_data_json)
     VALUES (@id, @position, @project_id, @name, @published_version, @available, @error_code,
       @input_schema_json, @outputs_json, @limits_json, @steps, @allows_partial, @needs_approval,
       @organization_data_json)`,
  ).run({
    id: w.id,
    position,
    project_id: w.project_id,
    name: w.name,
    published_version: w.published_version,
    available: w.available ? 1 : 0,
    error_code: w.error_code,
    input_schema_json: JSON.stringify(w.input_schema),
    outputs_json: JSON.stringify(w.outputs),
    limits_json: JSON.stringify(w.limits),
    steps: w.steps,
    allows_partial: w.allows_partial ? 1 : 0,
    needs_approval: w.needs_approval ? 1 : 0,
    organization_data_json:
      w.organization_data === null ? null : JSON.stringify(w.organization_data),
  })
}

export function getWorkflow(db: Db, id: string): Workflow | undefined {
  const row = db.stmt('SELECT * FROM workflows WHERE id = ?').get(id) as WorkflowRow | undefined
  return row && toWorkflow(row)
}

/** The Workflows of a project in fixture order. */
export function listWorkflows(db: Db, projectId: string): Workflow[] {
  return (
    db
      .stmt('SELECT * FROM workflows WHERE project_id = ? ORDER BY position')
      .all(projectId) as WorkflowRow[]
  ).map(toWorkflow)
}

/** Republishes a Workflow (control API): the next published_version, available again, optional new facts. */
export function publishWorkflow(
  db: Db,
  id: string,
  patch: Partial<Pick<Workflow, 'input_schema' | 'outputs' | 'steps' | 'allows_partial'>> = {},
): Workflow | undefined {
  const w = getWorkflow(db, id)
  if (!w) return undefined
  const next: Workflow = {
    ...w,
    ...patch,
    published_version: w.published_version + 1,
    available: true,
    error_code: null,
  }
  db.stmt(
    `UPDATE workflows SET published_version = ?, available = 1, error_code = NULL, input_schema_json = ?,
       outputs_json = ?, steps = ?, allows_partial = ? WHERE id = ?`,
  ).run(
    next.published_version,
    JSON.stringify(next.input_schema),
    JSON.stringify(next.outputs),
    next.steps,
    next.allows_partial ? 1 : 0,
    id,
  )
  return next
}

/** Replaces a Workflow's organization data (control API); false when there is no such Workflow. */
export function setOrganizationData(db: Db, id: string, od: OrganizationData): boolean {
  return (
    db
      .stmt('UPDATE workflows SET organization_data_json = ? WHERE id = ?')
      .run(JSON.stringify(od), id).changes > 0
  )
}

/** Stops a Workflow (control API): available false with the given error code. */
export function stopWorkflow(
  db: Db,
  id: string,
  errorCode: ErrorCode = 'WORKFLOW_UNAVAILABLE',
): boolean {
  return (
    db.stmt('UPDATE workflows SET available = 0, error_code = ? WHERE id = ?').run(errorCode, id)
      .changes > 0
  )
}
