/** A real target's world from the CLI's flags and what the key can see (conformance/support/world.ts). */
import { describe, expect, it } from 'vitest'
import { discoverWorld, worldRoles, WorldError, type Getter } from '../support/world.js'

const P = 'p-1'
const deployments = [
  { id: 'd-retired', project_id: P, status: 'RETIRED' },
  { id: 'd-1', project_id: P, status: 'ACTIVE' },
  { id: 'd-2', project_id: P, status: 'ACTIVE' },
]

/** A target answering from a table of paths (404 otherwise); records what was asked. */
function target(answers: Record<string, { status: number; body: unknown }>) {
  const asked: string[] = []
  const get: Getter = async (path, key) => {
    asked.push(`${key} ${path}`)
    return answers[path] ?? { status: 404, body: { error: { code: 'NOT_FOUND' } } }
  }
  return { get, asked }
}

describe('world discovery', () => {
  it('takes the key as full, the listed ACTIVE Deployments as active and active2, a RETIRED one as retired', async () => {
    const { get, asked } = target({
      '/v1/deployments': { status: 200, body: { items: deployments } },
    })
    const world = await discoverWorld(get, { apiKey: 'k' })
    expect(world).toEqual({
      projectId: P,
      keys: { full: 'k' },
      deployments: { active: 'd-1', active2: 'd-2', retired: 'd-retired' },
      workflows: {},
    })
    expect(asked).toEqual(['k /v1/deployments'])
    expect(worldRoles(world).missing).toContain('keys.readOnly')
  })

  it('uses --deployment as the active one, --workflow by its availability, and the owner token', async () => {
    const { get } = target({
      '/v1/deployments': { status: 200, body: { items: deployments } },
      '/v1/workflows/w-1': { status: 200, body: { available: false } },
    })
    const world = await discoverWorld(get, {
      apiKey: 'k',
      deployment: 'd-2',
      workflow: 'w-1',
      ownerToken: 'ot',
    })
    expect(world.deployments).toMatchObject({ active: 'd-2', active2: 'd-1' })
    expect(world.workflows).toEqual({ unavailable: 'w-1' })
    expect(world.ownerToken).toBe('ot')
  })

  it('keeps the roles of a world file the flags do not give', async () => {
    const { get } = target({ '/v1/deployments': { status: 200, body: { items: deployments } } })
    const world = await discoverWorld(get, {
      apiKey: 'k',
      workflow: undefined,
      base: {
        keys: { full: 'ignored', readOnly: 'ro', otherProject: 'other' },
        deployments: { active: 'ignored', otherProject: 'd-x' },
        workflows: { available: 'w-file' },
      },
    })
    expect(world.keys).toEqual({ full: 'k', readOnly: 'ro', otherProject: 'other' })
    expect(world.deployments).toMatchObject({ active: 'd-1', otherProject: 'd-x' })
    expect(world.workflows).toEqual({ available: 'w-file' })
  })

  it('names the root cause when the world cannot be built', async () => {
    const forbidden = target({
      '/v1/deployments': { status: 403, body: { error: { code: 'FORBIDDEN' } } },
    })
    await expect(discoverWorld(forbidden.get, { apiKey: 'k' })).rejects.toThrow(
      /403 FORBIDDEN: give --deployment/,
    )
    const empty = target({ '/v1/deployments': { status: 200, body: { items: [] } } })
    await expect(discoverWorld(empty.get, { apiKey: 'k' })).rejects.toThrow(WorldError)
    const wrong = target({ '/v1/deployments': { status: 200, body: { items: deployments } } })
    await expect(discoverWorld(wrong.get, { apiKey: 'k', workflow: 'nope' })).rejects.toThrow(
      /--workflow nope: GET answered 404 NOT_FOUND/,
    )
  })
})
