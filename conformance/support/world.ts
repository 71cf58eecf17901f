/**
 * The suite's view of the system under test: which keys, Deployments and Workflows play which role. On the
 * mock it is derived from GET /_mock/fixtures; on a real deployment it is read from the JSON file named by
 * TARGET_WORLD (same shape). Roles a target lacks are undefined and their tests are skipped.
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
  deployments: { active: string; active2?: string; retired?: string; otherProject?: string }
  workflows: { available?: string; unavailable?: string; otherProject?: string }
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
  workflows: { id: string; published_version: number; available?: boolean }[]
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
    },
  }
}
