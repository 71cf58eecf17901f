import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { memoryLog } from '../util/log.js'

const A = {
  project: 'aaaaaaaa-0000-4000-8000-000000000000',
  d1: 'aaaaaaaa-d000-4000-8000-000000000001',
  d2: 'aaaaaaaa-d000-4000-8000-000000000002',
}
const C = {
  project: 'cccccccc-0000-4000-8000-000000000000',
  d1: 'cccccccc-d000-4000-8000-000000000001',
}
const DAY = 24 * 3600_000

let mock: Mock
let log: ReturnType<typeof memoryLog>
beforeEach(async () => {
  log = memoryLog()
  mock = await createMock({ log })
})
afterEach(() => {
  mock.close()
})

let sessionIdem = 0
/** A real Session of the Deployment (its first Turn ends 5 s later under the default scenario). */
async function newSession(deploymentId: string, key = 'sk_test_a_full'): Promise<string> {
  const res = await mock.app.request(`/v1/deployments/${deploymentId}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `session-${++sessionIdem}`,
    },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
  expect(res.status).toBe(202)
  return ((await res.json()) as { session_id: string }).session_id
}

async function closeSession(sessionId: string): Promise<void> {
  await mock.clock.advance(10)
  const res = await mock.app.request(`/v1/sessions/${sessionId}/close`, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer sk_test_a_full',
      'Content-Type': 'application/json',
      'Idempotency-Key': `close-${sessionId}`,
    },
    body: '{}',
  })
  expect(res.status).toBe(200)
}

let idem = 0
function upload(path: string, key = 'sk_test_a_full', name = 'hello.txt') {
  const form = new FormData()
  form.append('file', new File(['hello\n'], name, { type: 'text/plain' }))
  return mock.app.request(path, {
    method: 'POST',
    body: form,
    headers: { Authorization: `Bearer ${key}`, 'Idempotency-Key': `k${++idem}` },
  })
}
const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code

describe('session file uploads', () => {
  it('stores a file of an active Session for 30 days (RET-007)', async () => {
    const s1 = await newSession(A.d1)
    const res = await upload(`/v1/sessions/${s1}/files`)
    expect(res.status).toBe(201)
    const body = (await res.json()) as { expires_at: string }
    expect(Date.parse(body.expires_at)).toBe(mock.clock.now().getTime() + 30 * DAY)
  })

  it('answers 409 SESSION_CLOSED for a closed Session and 410 SESSION_EXPIRED for an expired one', async () => {
    const oldId = await newSession(A.d1)
    await mock.clock.advance(31 * 24 * 3600)
    const closedId = await newSession(A.d1)
    await closeSession(closedId)
    const closed = await upload(`/v1/sessions/${closedId}/files`)
    expect([closed.status, await code(closed)]).toEqual([409, 'SESSION_CLOSED'])
    const old = await upload(`/v1/sessions/${oldId}/files`)
    expect([old.status, await code(old)]).toEqual([410, 'SESSION_EXPIRED'])
  })

  it('answers 404 for a Session of another Project, of a Deployment the key may not call, or unknown', async () => {
    const c = await newSession(C.d1, 'sk_test_c_full')
    const d2 = await newSession(A.d2)
    for (const [path, key] of [
      [`/v1/sessions/${c}/files`, 'sk_test_a_full'],
      [`/v1/sessions/${d2}/files`, 'sk_test_a_one_deployment'],
      ['/v1/sessions/aaaaaaaa-5e55-4000-8000-000000000000/files', 'sk_test_a_full'],
    ] as const) {
      const res = await upload(path, key)
      expect([res.status, await code(res)]).toEqual([404, 'NOT_FOUND'])
    }
    expect((await upload(`/v1/sessions/${d2}/files`)).status).toBe(201)
  })

  it("refuses a file type outside the Session Deployment's input_mime_types with 415 (DEP-005)", async () => {
    // Deployment 2 of Project A accepts text/plain, text/markdown, text/csv and application/pdf only.
    const s2 = await newSession(A.d2)
    const form = new FormData()
    form.append('file', new File(['{"a":1}'], 'data.json', { type: 'application/json' }))
    const res = await mock.app.request(`/v1/sessions/${s2}/files`, {
      method: 'POST',
      body: form,
      headers: { Authorization: 'Bearer sk_test_a_full', 'Idempotency-Key': 'narrow' },
    })
    expect([res.status, await code(res)]).toEqual([415, 'UNSUPPORTED_FILE_TYPE'])
    expect((await upload(`/v1/sessions/${s2}/files`)).status).toBe(201)
  })
})

describe('downloads', () => {
  async function artifact(): Promise<string> {
    const res = await mock.app.request('/_mock/artifacts', {
      method: 'POST',
      body: JSON.stringify({
        project_id: A.project,
        deployment_id: A.d1,
        filename: 'r.txt',
        mime_type: 'text/plain',
        content_base64: Buffer.from('result').toString('base64'),
      }),
    })
    expect(res.status).toBe(201)
    return ((await res.json()) as { artifact_id: string }).artifact_id
  }
  const issue = async (id: string, key = 'sk_test_a_full') =>
    mock.app.request(`/v1/artifacts/${id}/download`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
    })

  it('never logs the token: the request line carries the route pattern, and the store keeps only a hash', async () => {
    const id = await artifact()
    const { url } = (await (await issue(id)).json()) as { url: string }
    const token = new URL(url, 'http://x').searchParams.get('token')!
    expect((await mock.app.request(url)).status).toBe(200)
    const lines = JSON.stringify(log.lines)
    expect(lines).not.toContain(token)
    expect(log.lines.some((l) => l.route === '/v1/artifacts/:artifact_id/content')).toBe(true)
    const rows = mock.deps.db.raw.prepare('SELECT * FROM download_tokens').all()
    expect(JSON.stringify(rows)).not.toContain(token)
  })

  it('counts a download as a Read-class call of the key that issued the address (RATE-002)', async () => {
    const id = await artifact()
    // sk_test_a_throttled: 5 reads per minute (a fixed window from the first); issues and downloads count.
    const issueUrl = async () => {
      const res = await issue(id, 'sk_test_a_throttled')
      expect(res.status).toBe(200)
      return ((await res.json()) as { url: string }).url
    }
    const first = await issueUrl()
    const second = await issueUrl()
    await mock.clock.advance(10)
    const third = await issueUrl()
    expect((await mock.app.request(first)).status).toBe(200)
    expect((await mock.app.request(second)).status).toBe(200)
    const limited = await mock.app.request(third)
    expect([limited.status, await code(limited)]).toEqual([429, 'RATE_LIMITED'])
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
    // The refused download did not use the address up: it works once the window has passed.
    await mock.clock.advance(50)
    expect((await mock.app.request(third)).status).toBe(200)
  })
})
