/**
 * The bench's fixture world and the requests it measures. The world is the default one with Project A's
 * waiting cap and budgets lifted to their maxima, so that every fresh Session creation of a round creates work,
 * and clones of Project A that fresh-key creations rotate over (a round of fresh keys is bounded by their
 * waiting caps, and the mock is reset before each one).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './targets.js'

export const KEY = 'sk_test_a_full'
export const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'
export const WORKFLOW = 'aaaaaaaa-f000-4000-8000-000000000001'
/** Accepted executions that may wait in one Project (the fixture schema's maximum). */
export const WAITING_CAP = 1000
/**
 * Projects that fresh-key creations rotate over: Project A and clones of it (each with its own key and
 * Deployment, its cap and budgets lifted), so that a fresh-key round holds FRESH_PROJECTS x WAITING_CAP
 * creations and lasts long enough to be measured like the other endpoints.
 */
export const FRESH_PROJECTS = 5
const cloneId = (k: number, part: string) => `e0e0${k.toString(16).padStart(4, '0')}-${part}`
/** Each fresh-key Project's Session path and key, in rotation order (Project A first). */
export const FRESH_TARGETS = Array.from({ length: FRESH_PROJECTS }, (_, k) => ({
  path: `/v1/deployments/${k === 0 ? DEPLOYMENT : cloneId(k, 'd000-4000-8000-000000000001')}/sessions`,
  authorization: `Bearer ${k === 0 ? KEY : `sk_test_bench_${k}`}`,
}))
export const AUTH = { Authorization: `Bearer ${KEY}` }
export const JSON_AUTH = { ...AUTH, 'Content-Type': 'application/json' }
/** A Session creation body; max_su 0.01 so that a round's reservations stay far inside the day's budget. */
export const SESSION_BODY = JSON.stringify({
  input: [{ type: 'TEXT', text: 'Summarise the quarterly report' }],
  limits: { max_su: 0.01 },
})

/** Writes the bench world (default world, Project A lifted) to a temporary file; returns its path. */
export function writeBenchWorld(): string {
  const world = JSON.parse(readFileSync(join(ROOT, 'fixtures/default-world.json'), 'utf8')) as {
    projects: Record<string, unknown>[]
  }
  const a = world.projects[0]!
  const lifted = {
    su_balance: 1_000_000,
    daily_budget_su: 1000,
    monthly_budget_su: 30000,
    max_waiting_executions: WAITING_CAP,
  }
  Object.assign(a, lifted)
  // The fresh-key clones: Project A's first Deployment and full key, under ids of their own.
  const keys = a.api_keys as { key: string; deployment_ids: string[] }[]
  const deployments = a.deployments as { id: string }[]
  const full = keys.find((k) => k.key === KEY)!
  const deployment = deployments.find((d) => d.id === DEPLOYMENT)!
  for (let k = 1; k < FRESH_PROJECTS; k++) {
    const deploymentId = cloneId(k, 'd000-4000-8000-000000000001')
    const projectId = cloneId(k, '0000-4000-8000-000000000000')
    world.projects.push(
      Object.assign(
        {
          id: projectId,
          name: `Bench clone ${k} of Project A`,
          approved: true,
          owner_token: `bench.clone${k}.token`,
          api_keys: [
            Object.assign({}, full, { key: `sk_test_bench_${k}`, deployment_ids: [deploymentId] }),
          ],
          deployments: [Object.assign({}, deployment, { id: deploymentId, project_id: projectId })],
          workflows: [],
        },
        lifted,
      ),
    )
  }
  delete (world as { $schema?: string }).$schema
  const file = join(tmpdir(), `bench-world-${process.pid}.json`)
  writeFileSync(file, JSON.stringify(world))
  return file
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null }
}

export const control = (base: string, method: string, path: string, body?: unknown) =>
  call(base, method, `/_mock${path}`, body)

function expectStatus(what: string, r: { status: number; json: unknown }, status: number) {
  if (r.status !== status)
    throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json)} (expected ${status})`)
}

/** What the measured requests read: a finished Turn, a Run with 100 outputs, the replayed receipt. */
export type Prepared = {
  turnPath: string
  runPath: string
  bodies: { method: string; path: string; status: number; body: unknown }[]
}

/** Resets the mock and builds the measured objects (the same ids every time: the id sequence rewinds). */
export async function prepareWorld(base: string): Promise<Prepared> {
  expectStatus('reset', await control(base, 'POST', '/reset'), 200)
  const created = await call(base, 'POST', `/v1/deployments/${DEPLOYMENT}/sessions`, SESSION_BODY, {
    ...AUTH,
    'Idempotency-Key': 'bench-setup',
  })
  expectStatus('create session', created, 202)
  const { status_url: turnPath } = created.json as { status_url: string }
  // A Run with 100 outputs: an inline script of 100 TEXT outputs, then success.
  const steps = [
    { at: 1, step: 'running' },
    ...Array.from({ length: 100 }, (_, i) => ({
      at: 2,
      step: 'output',
      output:
        i === 0
          ? { key: 'summary', type: 'TEXT', text: 'summary' }
          : { contract: 'optional', type: 'JSON', data: { items: [i] } },
    })),
    { at: 3, step: 'succeed' },
  ]
  expectStatus(
    'queue scenario',
    await control(base, 'POST', '/scenarios', { target_id: WORKFLOW, scenario: { steps } }),
    201,
  )
  const run = await call(
    base,
    'POST',
    `/v1/workflows/${WORKFLOW}/runs`,
    { published_version: 1, input: { topic: 'bench' }, limits: { max_su: 0.01 } },
    { ...AUTH, 'Idempotency-Key': 'bench-run' },
  )
  expectStatus('start run', run, 202)
  const { status_url: runPath } = run.json as { status_url: string }
  expectStatus('advance', await control(base, 'POST', '/clock/advance', { seconds: 10 }), 200)
  const turn = await call(base, 'GET', turnPath, undefined, AUTH)
  expectStatus('read turn', turn, 200)
  const runDetail = await call(base, 'GET', runPath, undefined, AUTH)
  expectStatus('read run', runDetail, 200)
  // The Run holds 100 outputs; its detail shows the first page (50) and a cursor to the rest.
  const detail = runDetail.json as { outputs: unknown[]; next_cursor: string | null }
  const rest = await call(
    base,
    'GET',
    `${runPath}/outputs?limit=100&after=${detail.next_cursor}`,
    undefined,
    AUTH,
  )
  expectStatus('read run outputs', rest, 200)
  const outputs = detail.outputs.length + (rest.json as { outputs: unknown[] }).outputs.length
  if (outputs !== 100) throw new Error(`the bench Run has ${outputs} outputs, not 100`)
  const deployments = await call(base, 'GET', '/v1/deployments', undefined, AUTH)
  expectStatus('list deployments', deployments, 200)
  const replay = await call(base, 'POST', `/v1/deployments/${DEPLOYMENT}/sessions`, SESSION_BODY, {
    ...AUTH,
    'Idempotency-Key': 'bench-replay',
  })
  expectStatus('create session to replay', replay, 202)
  return {
    turnPath,
    runPath,
    bodies: [
      { method: 'GET', path: honoPath(turnPath), status: 200, body: turn.json },
      { method: 'GET', path: '/v1/deployments', status: 200, body: deployments.json },
      { method: 'GET', path: honoPath(runPath), status: 200, body: runDetail.json },
      {
        method: 'POST',
        path: `/v1/deployments/:deployment_id/sessions`,
        status: 202,
        body: replay.json,
      },
    ],
  }
}

/** A concrete path as a Hono pattern with its ids as parameters (the bare app routes like the mock). */
const honoPath = (path: string) =>
  path.replace(
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
    (_, i: number) => `:id${i}`,
  )
