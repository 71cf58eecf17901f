/**
 * Projects and API keys: prepared statements and row <-> domain mapping. A key is looked up by its secret
 * string (primary key), so authentication stays O(1) in the number of keys.
 */
import type { Db } from './db.js'
import { columnsExcept } from './rows.js'

export type Project = {
  id: string
  name: string
  approved: boolean
  owner_token: string
  su_balance: number
  daily_budget_su: number
  monthly_budget_su: number
  storage_limit_bytes: number
  /** Accepted executions that may wait for a slot before 429 CONCURRENCY_LIMIT (assumed). */
  max_waiting_executions: number
  /** ART-003: SU charged when one of its download addresses is consumed (file_storage_transfer; assumed). */
  download_su: number
}

export type ApiKey = {
  key: string
  project_id: string
  name: string
  scopes: string[]
  deployment_ids: string[]
  /** ms since the epoch, or null for a key that never expires. */
  expires_at: number | null
  revoked: boolean
  /** Lower per-key call-rate limits; null means the document's default. */
  accept_per_minute: number | null
  read_per_minute: number | null
}

type ProjectRow = Omit<Project, 'approved'> & { approved: number; position: number }
type ApiKeyRow = Omit<ApiKey, 'scopes' | 'deployment_ids' | 'revoked'> & {
  scopes_json: string
  deployment_ids_json: string
  revoked: number
  position: number
}

const PROJECT_DERIVED = new Set(['position', 'approved'])
const toProject = (r: ProjectRow): Project => {
  const p = columnsExcept(r, PROJECT_DERIVED)
  p.approved = r.approved === 1
  return p as Project
}

const API_KEY_DERIVED = new Set(['position', 'scopes_json', 'deployment_ids_json', 'revoked'])
const toApiKey = (r: ApiKeyRow): ApiKey => {
  const k = columnsExcept(r, API_KEY_DERIVED)
  k.scopes = JSON.parse(r.scopes_json) as string[]
  k.deployment_ids = JSON.parse(r.deployment_ids_json) as string[]
  k.revoked = r.revoked === 1
  return k as ApiKey
}

export function insertProject(db: Db, p: Project, position: number): void {
  db.stmt(
    `INSERT INTO projects (id, position, name, approved, owner_token, su_balance, daily_budget_su, monthly_budget_su, storage_limit_bytes, max_waiting_executions, download_su)
     VALUES (@id, @position, @name, @approved, @owner_token, @su_balance, @daily_budget_su, @monthly_budget_su, @storage_limit_bytes, @max_waiting_executions, @download_su)`,
  ).run({ ...p, position, approved: p.approved ? 1 : 0 })
}

/** One Project by id: one SQL text for getProject and viewProject, so both read the same kept rows. */
const PROJECT_BY_ID = 'SELECT * FROM projects WHERE id = ?'

export function getProject(db: Db, id: string): Project | undefined {
  return db.cached(PROJECT_BY_ID).record(toProject, id)
}

/** A Project to read only: while its row is kept, one frozen record shared by every reader (no copy per call). */
export function viewProject(db: Db, id: string): Readonly<Project> | undefined {
  return db.cached(PROJECT_BY_ID).view(toProject, id)
}

export function getProjectByOwnerToken(db: Db, token: string): Project | undefined {
  const row = db.stmt('SELECT * FROM projects WHERE owner_token = ?').get(token) as
    ProjectRow | undefined
  return row && toProject(row)
}

/** Every project in fixture order (control API only: the fixture world is small). */
export function listProjects(db: Db): Project[] {
  return (db.stmt('SELECT * FROM projects ORDER BY position').all() as ProjectRow[]).map(toProject)
}

export function insertApiKey(db: Db, k: ApiKey, position: number): void {
  db.stmt(
    `INSERT INTO api_keys (key, position, project_id, name, scopes_json, deployment_ids_json, expires_at, revoked, accept_per_minute, read_per_minute)
     VALUES (@key, @position, @project_id, @name, @scopes_json, @deployment_ids_json, @expires_at, @revoked, @accept_per_minute, @read_per_minute)`,
  ).run({
    key: k.key,
    position,
    project_id: k.project_id,
    name: k.name,
    scopes_json: JSON.stringify(k.scopes),
    deployment_ids_json: JSON.stringify(k.deployment_ids),
    expires_at: k.expires_at,
    revoked: k.revoked ? 1 : 0,
    accept_per_minute: k.accept_per_minute,
    read_per_minute: k.read_per_minute,
  })
}

export function getApiKey(db: Db, key: string): ApiKey | undefined {
  return db.cached('SELECT * FROM api_keys WHERE key = ?').record(toApiKey, key)
}

const KEY_AND_PROJECT_DERIVED = new Set([...API_KEY_DERIVED, 'project_approved'])

/**
 * A key and whether its Project is approved for the beta, in one statement (every /v1 request asks both:
 * mock/middleware/api-key.ts).
 */
export function getApiKeyAndApproval(
  db: Db,
  key: string,
): { key: ApiKey; approved: boolean } | undefined {
  return db
    .cached(
      'SELECT k.*, p.approved AS project_approved FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.key = ?',
    )
    .record(toKeyAndApproval, key)
}

const toKeyAndApproval = (
  row: ApiKeyRow & { project_approved: number },
): { key: ApiKey; approved: boolean } => {
  const k = columnsExcept(row, KEY_AND_PROJECT_DERIVED)
  k.scopes = JSON.parse(row.scopes_json) as string[]
  k.deployment_ids = JSON.parse(row.deployment_ids_json) as string[]
  k.revoked = row.revoked === 1
  return { key: k as ApiKey, approved: row.project_approved === 1 }
}

export function listApiKeys(db: Db, projectId: string): ApiKey[] {
  return (
    db
      .stmt('SELECT * FROM api_keys WHERE project_id = ? ORDER BY position')
      .all(projectId) as ApiKeyRow[]
  ).map(toApiKey)
}

/** Consumes settled SU from a Project's balance (actual usage only). */
export function chargeProject(db: Db, projectId: string, su: number): void {
  if (su > 0)
    db.stmt('UPDATE projects SET su_balance = su_balance - ? WHERE id = ?').run(su, projectId)
}

/** Sets a Project's SU balance (control API: rehearse MINIMUM_SU_REQUIRED); false when there is no such Project. */
export function setProjectBalance(db: Db, projectId: string, su: number): boolean {
  return db.stmt('UPDATE projects SET su_balance = ? WHERE id = ?').run(su, projectId).changes > 0
}

/** Sets a Project's file storage limit (control API: rehearse PROJECT_STORAGE_LIMIT); false when absent. */
export function setProjectStorageLimit(db: Db, projectId: string, bytes: number): boolean {
  return (
    db.stmt('UPDATE projects SET storage_limit_bytes = ? WHERE id = ?').run(bytes, projectId)
      .changes > 0
  )
}
