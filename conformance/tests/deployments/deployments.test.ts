/**
 * Resources > Deployment (DeploymentDocumented) and Endpoints > Deployments: the documented fields and their
 * types, status ACTIVE or RETIRED, input_mime_types an array or null, no source_agent_id, and a list of exactly
 * what the key may call. (The response checks validate the OpenAPI schema on every response; these tests state
 * the document's table itself.)
 */
import { describe, expect, it } from 'vitest'
import { samplePath } from '../../support/documented.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

type Deployment = Record<string, unknown>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** ISO 8601 date-time with a UTC offset (Z or ±hh:mm). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

const isStringArray = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string')

/** The document's Deployment table: field -> type check. */
const FIELDS: Record<string, (v: unknown) => boolean> = {
  id: (v) => typeof v === 'string' && UUID.test(v),
  project_id: (v) => typeof v === 'string' && UUID.test(v),
  name: (v) => typeof v === 'string',
  version: Number.isInteger,
  status: (v) => typeof v === 'string',
  digest: (v) => typeof v === 'string',
  model_tier: (v) => typeof v === 'string',
  sandbox_tier: (v) => typeof v === 'string',
  files: isStringArray,
  skill_count: Number.isInteger,
  tools: isStringArray,
  mcp_count: Number.isInteger,
  created_at: (v) => typeof v === 'string' && ISO_8601.test(v),
  revoked_at: (v) => v === null || (typeof v === 'string' && ISO_8601.test(v)),
  requests_per_minute: Number.isInteger,
  rate_limits: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  outputs: (v) =>
    Array.isArray(v) && v.every((o) => typeof o === 'object' && o !== null && !Array.isArray(o)),
  input_mime_types: (v) => v === null || isStringArray(v),
}

async function list(key = target.world.keys.full): Promise<Deployment[]> {
  const res = await target.api.get('/v1/deployments', { key })
  expect(res.status, res.text).toBe(200)
  return (res.body as { items: Deployment[] }).items
}

async function detail(id: string, key = target.world.keys.full): Promise<Deployment> {
  const res = await target.api.get(`/v1/deployments/${id}`, { key })
  expect(res.status, res.text).toBe(200)
  return res.body as Deployment
}

/** Every Deployment object the full key sees: list items and details. */
async function everyDeployment(): Promise<Deployment[]> {
  const items = await list()
  expect(items.length).toBeGreaterThan(0)
  return [...items, ...(await Promise.all(items.map((d) => detail(String(d.id)))))]
}

describe('Deployments', () => {
  it(`${req('DEP-001', 'DEP-002', 'RES-001', 'RES-002')} has every field of the document's Deployment table with its type`, async () => {
    for (const d of await everyDeployment()) {
      for (const [field, ok] of Object.entries(FIELDS)) {
        expect(field in d, `${String(d.id)} has ${field}`).toBe(true)
        expect(ok(d[field]), `${String(d.id)}.${field} = ${JSON.stringify(d[field])}`).toBe(true)
      }
    }
  })

  it(`${req('DEP-003')} has status ACTIVE or RETIRED`, async () => {
    for (const d of await everyDeployment()) expect(['ACTIVE', 'RETIRED']).toContain(d.status)
  })

  it(`${req('DEP-004')} has input_mime_types, an array of strings or null`, async () => {
    for (const d of await everyDeployment()) {
      expect('input_mime_types' in d).toBe(true)
      expect(FIELDS.input_mime_types!(d.input_mime_types)).toBe(true)
    }
  })

  it(`${req('DEP-006')} does not contain the removed field source_agent_id`, async () => {
    for (const d of await everyDeployment()) expect(d).not.toHaveProperty('source_agent_id')
  })

  it(`${req('DEP-001', 'DEP-002')} carries requests_per_minute and rate_limits`, async () => {
    for (const d of await everyDeployment()) {
      expect(Number.isInteger(d.requests_per_minute)).toBe(true)
      expect(d.requests_per_minute as number).toBeGreaterThan(0)
      expect(FIELDS.rate_limits!(d.rate_limits)).toBe(true)
    }
  })

  it(`${req('DEP-007', 'DEP-008')} answers each listed Deployment's detail with the same object`, async () => {
    for (const item of await list()) expect(await detail(String(item.id))).toEqual(item)
  })

  it(`${req('DEP-007')} lists the key's ACTIVE Deployments and nothing of another Project`, async () => {
    const items = await list()
    const ids = items.map((d) => d.id)
    const { active, active2, otherProject } = target.world.deployments
    expect(ids).toContain(active)
    if (active2) expect(ids).toContain(active2)
    if (otherProject) expect(ids).not.toContain(otherProject)
    const projects = new Set(items.map((d) => d.project_id))
    expect(projects.size).toBe(1)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it(`${req('DEP-007', 'AUTH-003')} lists for each key only Deployments that key can read`, async (ctx) => {
    const key = role(ctx, target.world.keys.oneDeployment, 'key limited to one Deployment')
    for (const item of await list(key)) await detail(String(item.id), key)
  })

  it(`${req('DEP-009')} answers NOT_FOUND to a Deployment id that does not exist`, async () => {
    const res = await target.api.get(`/v1/deployments/${samplePath('{id}')}`, {
      key: target.world.keys.full,
    })
    expectError(res, 'NOT_FOUND')
  })

  it(`${req('DEP-009', 'SVC-002')} answers NOT_FOUND to another Project's Deployment`, async (ctx) => {
    const other = role(ctx, target.world.deployments.otherProject, "another Project's Deployment")
    expectError(
      await target.api.get(`/v1/deployments/${other}`, { key: target.world.keys.full }),
      'NOT_FOUND',
    )
  })
})
