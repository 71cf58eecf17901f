/**
 * Deployments: prepared statements and row <-> domain mapping. The domain shape is the Deployment as the
 * API shows it (every field of the document's Deployment table).
 */
import type { Db } from './db.js'

/** Assumed shape (the document does not show RateLimits' fields): the two call-rate classes per minute. */
export type RateLimits = { accept_per_minute: number; read_per_minute: number }

/** An output of a result contract: key, output type and whether it is required. */
export type OutputContract = {
  key: string
  type: 'TEXT' | 'JSON' | 'FILE' | 'URL'
  required: boolean
  /** Optional JSON Schema a JSON result of this key must satisfy (OUTPUT_SCHEMA_MISMATCH otherwise). */
  schema?: unknown
}

export type Deployment = {
  id: string
  project_id: string
  name: string
  version: number
  status: 'ACTIVE' | 'RETIRED'
  digest: string
  model_tier: string
  sandbox_tier: string
  files: string[]
  skill_count: number
  tools: string[]
  mcp_count: number
  created_at: string
  revoked_at: string | null
  requests_per_minute: number
  rate_limits: RateLimits
  outputs: OutputContract[]
  input_mime_types: string[] | null
}

type DeploymentRow = {
  id: string
  position: number
  project_id: string
  name: string
  version: number
  status: 'ACTIVE' | 'RETIRED'
  digest: string
  model_tier: string
  sandbox_tier: string
  files_json: string
  skill_count: number
  tools_json: string
  mcp_count: number
  created_at: string
  revoked_at: string | null
  requests_per_minute: number
  accept_per_minute: number
  read_per_minute: number
  outputs_json: string
  input_mime_types_json: string | null
}

const toDeployment = (r: DeploymentRow): Deployment => ({
  id: r.id,
  project_id: r.project_id,
  name: r.name,
  version: r.version,
  status: r.status,
  digest: r.digest,
  model_tier: r.model_tier,
  sandbox_tier: r.sandbox_tier,
  files: JSON.parse(r.files_json) as string[],
  skill_count: r.skill_count,
  tools: JSON.parse(r.tools_json) as string[],
  mcp_count: r.mcp_count,
  created_at: r.created_at,
  revoked_at: r.revoked_at,
  requests_per_minute: r.requests_per_minute,
  rate_limits: { accept_per_minute: r.accept_per_minute, read_per_minute: r.read_per_minute },
  outputs: JSON.parse(r.outputs_json) as OutputContract[],
  input_mime_types:
    r.input_mime_types_json === null ? null : (JSON.parse(r.input_mime_types_json) as string[]),
})

export function insertDeployment(db: Db, d: Deployment, position: number): void {
  db.stmt(
    `INSERT INTO deployments (id, position, project_id, name, version, status, digest, model_tier, sandbox_tier,
       files_json, skill_count, tools_json, mcp_count, created_at, revoked_at, requests_per_minute,
       accept_per_minute, read_per_minute, outputs_json, input_mime_types_json)
     VALUES (@id, @position, @project_id, @name, @version, @status, @digest, @model_tier, @sandbox_tier,
       @files_json, @skill_count, @tools_json, @mcp_count, @created_at, @revoked_at, @requests_per_minute,
       @accept_per_minute, @read_per_minute, @outputs_json, @input_mime_types_json)`,
  ).run({
    id: d.id,
    position,
    project_id: d.project_id,
    name: d.name,
    version: d.version,
    status: d.status,
    digest: d.digest,
    model_tier: d.model_tier,
    sandbox_tier: d.sandbox_tier,
    files_json: JSON.stringify(d.files),
    skill_count: d.skill_count,
    tools_json: JSON.stringify(d.tools),
    mcp_count: d.mcp_count,
    created_at: d.created_at,
    revoked_at: d.revoked_at,
    requests_per_minute: d.requests_per_minute,
    accept_per_minute: d.rate_limits.accept_per_minute,
    read_per_minute: d.rate_limits.read_per_minute,
    outputs_json: JSON.stringify(d.outputs),
    input_mime_types_json: d.input_mime_types === null ? null : JSON.stringify(d.input_mime_types),
  })
}

export function getDeployment(db: Db, id: string): Deployment | undefined {
  return db.cached('SELECT * FROM deployments WHERE id = ?').record(toDeployment, id)
}

/** The Deployments of a project in fixture order. */
export function listDeployments(db: Db, projectId: string): Deployment[] {
  return db
    .cached('SELECT * FROM deployments WHERE project_id = ? ORDER BY position')
    .records(toDeployment, projectId)
}
