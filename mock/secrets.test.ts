/**
 * Secrets are unpredictable (issue "Hardening", item 1): download tokens and webhook secrets come from a
 * cryptographic source, and request ids reveal nothing about them. Record ids stay a seeded sequence, so two
 * mocks with the same seed and the same requests agree on every id and on nothing secret.
 */
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from './index.js'

const A = {
  project: 'aaaaaaaa-0000-4000-8000-000000000000',
  d1: 'aaaaaaaa-d000-4000-8000-000000000001',
}

const open: Mock[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
})

type Observed = {
  requestIds: string[]
  sessionId: string
  artifactId: string
  endpointId: string
  downloadToken: string
  secret: string
  rotatedSecret: string
}

/** One fixed sequence of requests, the first of them without a key (a 401); collects what it was given. */
async function run(seed: string): Promise<Observed> {
  const mock = await createMock({ seed, allowInsecureWebhooks: true })
  open.push(mock)
  const owner = mock.fixtures().projects.find((p) => p.id === A.project)!.owner_token
  const requestIds: string[] = []
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await mock.app.request(path, init)
    requestIds.push(res.headers.get('x-request-id')!)
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    call(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })

  expect((await call('/v1/deployments')).status).toBe(401)
  const session = await post(
    `/v1/deployments/${A.d1}/sessions`,
    { input: [{ type: 'TEXT', text: 'hello' }] },
    { Authorization: 'Bearer sk_test_a_full', 'Idempotency-Key': 'session-1' },
  )
  expect(session.status).toBe(202)
  const artifact = await post('/_mock/artifacts', {
    project_id: A.project,
    deployment_id: A.d1,
    filename: 'r.txt',
    mime_type: 'text/plain',
    content_base64: Buffer.from('result').toString('base64'),
  })
  expect(artifact.status).toBe(201)
  const receipt = await post(
    `/v1/artifacts/${String(artifact.body.artifact_id)}/download`,
    {},
    { Authorization: 'Bearer sk_test_a_full' },
  )
  expect(receipt.status).toBe(200)
  const owned = { Authorization: `Bearer ${owner}` }
  const endpoint = await post(
    `/api/runtime/projects/${A.project}/webhooks`,
    { url: 'http://127.0.0.1:9/hook' },
    owned,
  )
  expect(endpoint.status).toBe(201)
  const rotated = await post(
    `/api/runtime/projects/${A.project}/webhooks/${String(endpoint.body.id)}/rotate-secret`,
    {},
    owned,
  )
  expect(rotated.status).toBe(200)
  return {
    requestIds,
    sessionId: String(session.body.session_id),
    artifactId: String(artifact.body.artifact_id),
    endpointId: String(endpoint.body.id),
    downloadToken: new URL(String(receipt.body.url), 'http://x').searchParams.get('token')!,
    secret: String(endpoint.body.secret),
    rotatedSecret: String(rotated.body.secret),
  }
}

describe('unpredictable secrets', () => {
  it('[FILE-004][WHM-002][WHM-007][ERR-005] gives two mocks with the same seed the same ids but different tokens, secrets and request ids', async () => {
    const a = await run('same')
    const b = await run('same')
    expect([b.sessionId, b.artifactId, b.endpointId]).toEqual([
      a.sessionId,
      a.artifactId,
      a.endpointId,
    ])
    expect(b.downloadToken).not.toBe(a.downloadToken)
    expect(b.secret).not.toBe(a.secret)
    expect(b.rotatedSecret).not.toBe(a.rotatedSecret)
    expect(b.requestIds).toHaveLength(a.requestIds.length)
    b.requestIds.forEach((id, i) => {
      expect(id).toMatch(/^req_[0-9a-f]{24}$/)
      expect(id).not.toBe(a.requestIds[i])
    })
    expect(a.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/)
    expect(a.downloadToken).toMatch(/^[A-Za-z0-9_-]{32,}$/)
  })

  it('lets no one compute a token or secret from the request ids of a run (the reported attack)', async () => {
    // The reported attack: hash (seed, epoch, boot, counter) with the default seed until a 401's request id
    // matches, then read the download token and webhook secret off the next positions of the same sequence.
    const seen = await run('mock')
    const digest = (n: number, epoch: number, boot: number) =>
      createHash('sha256').update(`mock:${epoch}:${boot}:${n}`).digest()
    const predicted = new Set<string>()
    for (let epoch = 0; epoch < 2; epoch++) {
      for (let boot = 0; boot < 2; boot++) {
        for (let n = 0; n < 2000; n++) {
          const d = digest(n, epoch, boot)
          predicted.add(`req_${d.subarray(0, 12).toString('hex')}`)
          predicted.add(d.subarray(0, 24).toString('base64url'))
          predicted.add(`whsec_${d.subarray(0, 24).toString('base64url')}`)
        }
      }
    }
    for (const id of seen.requestIds) expect(predicted.has(id), id).toBe(false)
    for (const value of [seen.downloadToken, seen.secret, seen.rotatedSecret]) {
      expect(predicted.has(value), value).toBe(false)
    }
  })
})
