/**
 * The world the fuzz test aims at, and the state it watches.
 *   makeWitnesses(target)  on a mock: a file, Sessions (one finished, one waiting on a question), a Run held at an
 *                          approval, an artifact with a download token, a work's preparation, a webhook endpoint
 *                          with a delivery; their ids feed the request arbitraries so that fuzzed requests reach
 *                          real resources. On a real target only the world file's ids.
 *   snapshot(target, w)    what a rejected request must not change, read through the API: the fixtures (the
 *                          Projects' Deployments, keys and SU balances), the budget windows, the usage totals
 *                          and the preparations of the full key, the webhook endpoints and deliveries, and the
 *                          witnesses themselves (Sessions, Turns, the Run, the artifact). Mock only: on a real
 *                          deployment reads move on their own (other clients, running work, call-rate windows),
 *                          so the snapshot is empty there.
 */
import type { Agent } from 'node:http'
import { expect } from 'vitest'
import type { Witnesses } from '../../arbitraries/requests.js'
import { setInteractiveActions } from '../../support/actions.js'
import { makeArtifact } from '../../support/artifacts.js'
import { sendRaw } from '../../support/raw-http.js'
import { startRun } from '../../support/runs.js'
import {
  createSession,
  newIdempotencyKey,
  type SessionReceipt,
} from '../../support/session-create.js'
import type { Target } from '../../support/target.js'
import { helloTxt, upload } from '../../support/uploads.js'

const present = (...values: (string | undefined)[]): string[] =>
  values.filter((v): v is string => v !== undefined)

/** The ids every target has: the world file's (or fixtures') Deployments, Workflows and Project. */
export function worldWitnesses(target: Target): Witnesses {
  const { world } = target
  return {
    ids: {
      deployment_id: present(
        world.deployments.active,
        world.deployments.active2,
        world.deployments.retired,
        world.deployments.otherProject,
      ),
      workflow_id: present(
        world.workflows.available,
        world.workflows.unavailable,
        world.workflows.otherProject,
      ),
      project_id: [world.projectId],
    },
  }
}

const ok = (what: string, res: { status: number; text: string }, status = 200) =>
  expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(status)

/** Creates the witness resources on a mock target (see the module comment). */
export async function makeWitnesses(target: Target): Promise<Witnesses> {
  const base = worldWitnesses(target)
  const control = target.control
  if (!control) return base
  const { world, api } = target
  const key = world.keys.full
  const ids: Record<string, string[]> = { ...base.ids }
  const add = (name: string, id: string | undefined) => {
    if (id !== undefined) ids[name] = [...(ids[name] ?? []), id]
  }
  for (const p of (await control.fixtures()).projects) {
    if (p.id !== world.projectId) add('project_id', p.id)
  }
  await setInteractiveActions(target, world.projectId, true)

  const file = await upload(target, helloTxt())
  ok('upload', file, 201)
  add('file_id', (file.body as { file_id: string }).file_id)

  const finished = await createSession(target, { input: [{ type: 'TEXT', text: 'witness' }] })
  ok('finished session', finished, 202)
  const s1 = finished.body as SessionReceipt

  const active2 = world.deployments.active2 ?? world.deployments.active
  await control.queueScenario(active2, 'needs-answer')
  const asking = await createSession(
    target,
    { input: [{ type: 'TEXT', text: 'witness question' }], limits: { max_su: 1 } },
    { deploymentId: active2 },
  )
  ok('asking session', asking, 202)
  const s2 = asking.body as SessionReceipt

  let runId: string | undefined
  let publishedVersion: number | undefined
  const wf = world.workflows.available
  if (wf) {
    await control.queueScenario(wf, 'needs-approval')
    runId = (await startRun(target, wf)).run_id
  }

  const work = await api.post(
    '/v1/works',
    { title: 'Witness report', description: 'Prepare the monthly sales report.' },
    { key: world.keys.worksOnly ?? key, idem: newIdempotencyKey('work') },
  )
  ok('work', work, 201)
  const preparationId = (work.body as { preparation_id: string }).preparation_id

  await control.advance(5)

  const turns = [s1, s2].map(({ session_id, turn_id }) => ({ session_id, turn_id }))
  for (const s of turns) {
    add('session_id', s.session_id)
    add('turn_id', s.turn_id)
  }
  const items = await api.get(`/v1/sessions/${s2.session_id}/items`, { key })
  ok('items', items)
  const question = (
    items.body as { items: { content: { kind: string; action?: { id: string } } }[] }
  ).items.find((i) => i.content.kind === 'REQUIRED_ACTION')?.content.action?.id
  add('action_id', question)

  let contentHash: string | undefined
  if (runId) {
    add('run_id', runId)
    const run = await api.get(`/v1/runs/${runId}`, { key })
    ok('run', run)
    const action = (run.body as { run: { required_actions?: { id: string }[] } }).run
      .required_actions?.[0]?.id
    add('action_id', action)
    if (action) {
      const content = await api.get(`/v1/runs/${runId}/actions/${action}`, { key })
      ok('run action', content)
      contentHash = (content.body as { content_hash?: string }).content_hash
    }
    const wfBody = await api.get(`/v1/workflows/${wf}`, { key })
    publishedVersion = (wfBody.body as { published_version?: number }).published_version
  }

  const prep = await api.get(`/v1/preparations/${preparationId}`, { key })
  ok('preparation', prep)
  add('preparation_id', preparationId)

  const artifact = await makeArtifact(target)
  add('artifact_id', artifact.artifact_id)
  const download = await api.post(`/v1/artifacts/${artifact.artifact_id}/download`, undefined, {
    key,
  })
  ok('download', download)
  const token = new URL((download.body as { url: string }).url, 'http://x').searchParams.get(
    'token',
  )

  // The endpoint comes after the last advance of the clock: its deliveries stay PENDING, never sent.
  if (world.ownerToken) {
    const base = `/api/runtime/projects/${world.projectId}`
    const endpoint = await api.post(
      `${base}/webhooks`,
      { url: 'https://hooks.example.com/fuzz-witness' },
      { key: world.ownerToken },
    )
    ok('webhook endpoint', endpoint, 201)
    add('endpoint_id', (endpoint.body as { id: string }).id)
    const queued = await createSession(target, {
      input: [{ type: 'TEXT', text: 'witness delivery' }],
      limits: { max_su: 1 },
    })
    ok('queued session', queued, 202)
    const { session_id, turn_id } = queued.body as SessionReceipt
    turns.push({ session_id, turn_id })
    add('session_id', session_id)
    add('turn_id', turn_id)
    const deliveries = await api.get(`${base}/webhook-deliveries`, { key: world.ownerToken })
    ok('deliveries', deliveries)
    add('delivery_id', (deliveries.body as { items: { id: string }[] }).items[0]?.id)
  }

  return {
    ids,
    turns,
    ...(token ? { downloadToken: token } : {}),
    ...(publishedVersion !== undefined ? { publishedVersion } : {}),
    ...(contentHash ? { contentHash } : {}),
    preparationRevision: (prep.body as { revision: number }).revision,
  }
}

/** Control-API calls carry MOCK_CONTROL_TOKEN when the mock was started with one. */
const CONTROL_HEADERS: Record<string, string> = process.env.MOCK_CONTROL_TOKEN
  ? { Authorization: `Bearer ${process.env.MOCK_CONTROL_TOKEN}` }
  : {}

export type Snapshot = Record<string, { status: number; body: unknown }>

/** The observable state (see the module comment); reads run in parallel, without the response checks. */
export async function snapshot(target: Target, w: Witnesses, agent?: Agent): Promise<Snapshot> {
  // Mock only: a real deployment's reads move on their own (other clients, running work, call-rate windows).
  if (!target.control) return {}
  const { world } = target
  const bearer = (k: string | undefined): Record<string, string> =>
    k ? { Authorization: `Bearer ${k}` } : {}
  const full = bearer(world.keys.full)
  const owner = bearer(world.ownerToken)
  const project = world.projectId
  const reads: [string, string, Record<string, string>][] = [
    // The fixtures hold the Projects' Deployments, keys and SU balances.
    ['fixtures', '/_mock/fixtures', CONTROL_HEADERS],
    ['budget', `/_mock/projects/${project}/budget`, CONTROL_HEADERS],
    ['usage', '/v1/usage', full],
    ['preparations', '/v1/preparations', bearer(world.keys.worksOnly ?? world.keys.full)],
    ['webhook endpoints', `/api/runtime/projects/${project}/webhooks`, owner],
    ['webhook deliveries', `/api/runtime/projects/${project}/webhook-deliveries`, owner],
  ]
  for (const id of w.ids.session_id ?? []) reads.push([`session ${id}`, `/v1/sessions/${id}`, full])
  for (const t of w.turns ?? [])
    reads.push([`turn ${t.turn_id}`, `/v1/sessions/${t.session_id}/turns/${t.turn_id}`, full])
  for (const id of w.ids.run_id ?? []) reads.push([`run ${id}`, `/v1/runs/${id}`, full])
  for (const id of w.ids.artifact_id ?? [])
    reads.push([`artifact ${id}`, `/v1/artifacts/${id}`, full])
  const answers = await Promise.all(
    reads.map(async ([label, path, headers]) => {
      const res = await sendRaw(target.baseUrl, { method: 'GET', target: path, headers }, { agent })
      // A refusal is its status and code: its request_id is new on every read.
      const body =
        res.status >= 300
          ? (res.body as { error?: { code?: unknown } } | undefined)?.error?.code
          : res.body
      return [label, { status: res.status, body }] as const
    }),
  )
  return Object.fromEntries(answers)
}
