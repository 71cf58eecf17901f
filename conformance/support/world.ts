/**
 * The suite's view of the system under test: which keys, Deployments and Workflows play which role. On the
 * mock it is derived from GET /_mock/fixtures; on a real deployment it is discovered through the API from the
 * conformance CLI's flags (discoverWorld: the key, the Deployments it may call, the Workflow named), passed to
 * the test files as TARGET_WORLD_JSON, or read from the JSON file named by TARGET_WORLD (same shape). Roles a
 * target lacks are undefined and their tests are skipped.
 */
import { readFileSync } from 'node:fs'

export type World = {
  projectId: string
  ownerToken?: string
  keys: {
    /** Every scope, every Deployment of the project. */
    full: string
    /** Read scopes only (no files:write, runs:cancel, runs:delete, workflows:run). */
    readOnly?: string
    /** Limited to one Deployment. */
    oneDeployment?: string
    /** Works scopes (and usage:read) only, no Deployment. */
    worksOnly?: string
    revoked?: string
    expired?: string
    /** A key of another approved project (isolation). */
    otherProject?: string
    /** A key of a project that is not approved (private-beta gate). */
    unapproved?: string
  }
  deployments: {
    active: string
    active2?: string
    retired?: string
    otherProject?: string
    /**
     * An ACTIVE Deployment of the Project whose executions end SUCCEEDED with a FILE output (Output items), for
     * the artifact and download checks (support/file-outputs.ts): a real target's world file gives it as
     * `"deployments": {"fileOutput": "<id>"}` (CLI flag `--file-deployment <id>`). A mock needs none: it queues
     * the `file-output` scenario on a Deployment through its control API, so the mock's derived world leaves
     * it unset (and a rehearsal of a real target, which has no control API, skips those checks).
     */
    fileOutput?: string
  }
  workflows: {
    available?: string
    unavailable?: string
    otherProject?: string
    /** An available workflow whose steps read or write organization data within its publication grant. */
    organizationData?: string
    /** An available workflow whose steps use organization data beyond its publication grant. */
    dataDenied?: string
  }
}

type FixtureKey = {
  key: string
  scopes: string[]
  deployment_ids: string[]
  revoked?: boolean
  expires_at?: string | null
}
type FixtureProject = {
  id: string
  approved: boolean
  owner_token?: string
  api_keys: FixtureKey[]
  deployments: { id: string; status: string }[]
  workflows: {
    id: string
    published_version: number
    available?: boolean
    /** The mock's organization data of a workflow (grant, what its steps use), null when it uses none. */
    organization_data?: { grant: string[]; uses: string[] } | null
  }[]
}
export type FixturesBody = { projects: FixtureProject[] }

/** Reads a real target's world file (TARGET_WORLD). */
export const readWorldFile = (path: string): World =>
  JSON.parse(readFileSync(path, 'utf8')) as World

/** Derives the roles from the mock's fixtures (the default world or any world of the same kind). */
export function worldFromFixtures(body: FixturesBody, nowMs: number): World {
  const usable = (k: FixtureKey) =>
    !k.revoked && (!k.expires_at || Date.parse(k.expires_at) > nowMs)
  const approved = body.projects.filter((p) => p.approved)
  const a =
    approved.find((p) => p.deployments.filter((d) => d.status === 'ACTIVE').length >= 2) ??
    approved[0]
  if (!a) throw new Error('the fixture world has no approved project')
  const c = approved.find((p) => p !== a)
  const b = body.projects.find((p) => !p.approved)
  const byScopes = [...a.api_keys]
    .filter(usable)
    .sort(
      (x, y) =>
        y.scopes.length - x.scopes.length || y.deployment_ids.length - x.deployment_ids.length,
    )
  const full = byScopes[0]
  if (!full) throw new Error(`project ${a.id} has no usable key`)
  const active = a.deployments.filter((d) => d.status === 'ACTIVE')
  const allOfA = (k: FixtureKey) => a.deployments.every((d) => k.deployment_ids.includes(d.id))
  return {
    projectId: a.id,
    ownerToken: a.owner_token,
    keys: {
      full: full.key,
      readOnly: a.api_keys.find(
        (k) =>
          usable(k) &&
          allOfA(k) &&
          !k.scopes.includes('files:write') &&
          k.scopes.includes('runs:read'),
      )?.key,
      oneDeployment: a.api_keys.find(
        (k) => usable(k) && k.deployment_ids.length === 1 && k.scopes.length === full.scopes.length,
      )?.key,
      worksOnly: a.api_keys.find(
        (k) =>
          usable(k) &&
          k.deployment_ids.length === 0 &&
          k.scopes.every((s) => s.startsWith('works:') || s === 'usage:read'),
      )?.key,
      revoked: a.api_keys.find((k) => k.revoked)?.key,
      expired: a.api_keys.find(
        (k) => !k.revoked && k.expires_at && Date.parse(k.expires_at) <= nowMs,
      )?.key,
      otherProject: c?.api_keys.find(usable)?.key,
      unapproved: b?.api_keys.find(usable)?.key,
    },
    deployments: {
      active: active[0]!.id,
      active2: active[1]?.id,
      retired: a.deployments.find((d) => d.status === 'RETIRED')?.id,
      otherProject: c?.deployments[0]?.id,
    },
    workflows: {
      available: a.workflows.find((w) => w.available !== false)?.id,
      unavailable: a.workflows.find((w) => w.available === false)?.id,
      otherProject: c?.workflows[0]?.id,
      organizationData: a.workflows.find(
        (w) => w.available !== false && w.organization_data && withinGrant(w.organization_data),
      )?.id,
      dataDenied: a.workflows.find(
        (w) => w.available !== false && w.organization_data && !withinGrant(w.organization_data),
      )?.id,
    },
  }
}

/** Whether every organization data entry a workflow uses is in its publication grant (exact entries). */
const withinGrant = (od: { grant: string[]; uses: string[] }): boolean =>
  od.uses.every((u) => od.grant.includes(u))

/** What the conformance CLI knows of a real target: its flags, and optionally a world file for further roles. */
export type WorldFlags = {
  apiKey: string
  deployment?: string
  workflow?: string
  ownerToken?: string
  /** Roles the flags cannot give (more keys, another Project's ids): a partial world file. */
  base?: Partial<World>
}

/** A GET with an API key, as the discovery needs it (status and JSON body). */
export type Getter = (path: string, key: string) => Promise<{ status: number; body: unknown }>

/** The world cannot be built: one root cause for the CLI to print. */
export class WorldError extends Error {}

type ListedDeployment = { id: string; project_id?: string; status?: string }

const answer = (res: { status: number; body: unknown }): string => {
  const error = (res.body as { error?: { code?: string; message?: string } } | null)?.error
  return error?.code
    ? `${res.status} ${error.code}${error.message ? `: ${error.message}` : ''}`
    : String(res.status)
}

/**
 * Builds a real target's world from the flags and what the key can see: GET /v1/deployments lists the
 * Deployments the key may call (the first two ACTIVE ones play active and active2, a RETIRED one retired), the
 * project id comes from them; --deployment picks the active one; --workflow is read to learn whether it is
 * available. Other roles (a read-only key, another Project's key, ...) come only from `base`.
 */
export async function discoverWorld(get: Getter, flags: WorldFlags): Promise<World> {
  const key = flags.apiKey
  const listed = await get('/v1/deployments', key)
  let items: ListedDeployment[] = []
  if (listed.status === 200) items = (listed.body as { items?: ListedDeployment[] }).items ?? []
  else if (!flags.deployment)
    throw new WorldError(
      `GET /v1/deployments with the API key answered ${answer(listed)}: give --deployment <id>`,
    )
  let chosen = items.find((d) => d.id === flags.deployment)
  if (flags.deployment && !chosen) {
    const one = await get(`/v1/deployments/${flags.deployment}`, key)
    if (one.status !== 200)
      throw new WorldError(`--deployment ${flags.deployment}: GET answered ${answer(one)}`)
    chosen = one.body as ListedDeployment
  }
  const active = items.filter((d) => d.status === 'ACTIVE' && d.id !== chosen?.id)
  const first = chosen ?? active.shift()
  const activeId = first?.id ?? flags.base?.deployments?.active
  if (!activeId)
    throw new WorldError('the API key sees no ACTIVE Deployment: give --deployment <id>')
  const projectId = first?.project_id ?? items[0]?.project_id ?? flags.base?.projectId
  if (!projectId) throw new WorldError('no project_id on the Deployments the key sees')

  const workflows: World['workflows'] = { ...flags.base?.workflows }
  if (flags.workflow) {
    const w = await get(`/v1/workflows/${flags.workflow}`, key)
    if (w.status !== 200)
      throw new WorldError(`--workflow ${flags.workflow}: GET answered ${answer(w)}`)
    if ((w.body as { available?: boolean }).available === false) {
      workflows.unavailable = flags.workflow
      if (workflows.available === flags.workflow) delete workflows.available
    } else workflows.available = flags.workflow
  }
  const base = flags.base ?? {}
  return {
    projectId,
    ...((flags.ownerToken ?? base.ownerToken)
      ? { ownerToken: flags.ownerToken ?? base.ownerToken }
      : {}),
    keys: { ...base.keys, full: key },
    deployments: {
      ...base.deployments,
      active: activeId,
      ...(active[0] || base.deployments?.active2
        ? { active2: active[0]?.id ?? base.deployments?.active2 }
        : {}),
      ...(items.find((d) => d.status === 'RETIRED')
        ? { retired: items.find((d) => d.status === 'RETIRED')!.id }
        : {}),
    },
    workflows,
  }
}

/** The roles a world gives, and the ones it lacks (tests needing those are skipped). */
export function worldRoles(world: World): { present: string[]; missing: string[] } {
  const present: string[] = []
  const missing: string[] = []
  const note = (name: string, v: unknown) => (v === undefined ? missing : present).push(name)
  note('ownerToken', world.ownerToken)
  for (const k of [
    'readOnly',
    'oneDeployment',
    'worksOnly',
    'revoked',
    'expired',
    'otherProject',
    'unapproved',
  ] as const)
    note(`keys.${k}`, world.keys[k])
  for (const d of ['active2', 'retired', 'otherProject', 'fileOutput'] as const)
    note(`deployments.${d}`, world.deployments[d])
  for (const w of [
    'available',
    'unavailable',
    'otherProject',
    'organizationData',
    'dataDenied',
  ] as const)
    note(`workflows.${w}`, world.workflows[w])
  return { present: ['keys.full', 'deployments.active', ...present], missing }
}
