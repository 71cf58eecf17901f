/**
 * Retention of input files once used (Limits > Retention): a Session file keeps 30 days from upload whatever
 * happens to it (RET-008: using the Session does not extend it); only a pre-uploaded file gets 30 days from the
 * moment it is bound to a Turn (RET-007); a Run's input files live until the Run deadline and the end of the
 * Run's content retention (RET-009). Only the mock can show a bound input file's expiry (no read path shows it).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { getFile } from '../store/files.js'

const D1 = 'aaaaaaaa-d000-4000-8000-000000000001'
const WF = 'aaaaaaaa-f000-4000-8000-000000000001'
const DAY = 24 * 3600_000
const KEY = 'sk_test_a_full'

let mock: Mock
beforeEach(async () => {
  mock = await createMock()
})
afterEach(() => mock.close())

let idem = 0
const json = (method: string, path: string, body: unknown) =>
  mock.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${KEY}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `k${++idem}`,
    },
    body: JSON.stringify(body),
  })

async function upload(path: string): Promise<{ file_id: string; expires_at: string }> {
  const form = new FormData()
  form.append('file', new File(['hello\n'], 'hello.txt', { type: 'text/plain' }))
  const res = await mock.app.request(path, {
    method: 'POST',
    body: form,
    headers: { Authorization: `Bearer ${KEY}`, 'Idempotency-Key': `k${++idem}` },
  })
  expect(res.status).toBe(201)
  return (await res.json()) as { file_id: string; expires_at: string }
}

const expiresAt = (fileId: string) => getFile(mock.deps.db, fileId)!.expires_at
const fileInput = (fileId: string) => ({ input: [{ type: 'FILE', file_id: fileId }] })

describe('input file retention once used', () => {
  it('[RET-008][RET-007] keeps a Session file 30 days from upload when a later Turn uses it', async () => {
    const created = await json('POST', `/v1/deployments/${D1}/sessions`, {
      input: [{ type: 'TEXT', text: 'hello' }],
    })
    const { session_id } = (await created.json()) as { session_id: string }
    const file = await upload(`/v1/sessions/${session_id}/files`)
    const uploadedExpiry = Date.parse(file.expires_at)
    await mock.clock.advance(3 * 24 * 3600)
    const turn = await json('POST', `/v1/sessions/${session_id}/turns`, fileInput(file.file_id))
    expect(turn.status).toBe(202)
    expect(expiresAt(file.file_id)).toBe(uploadedExpiry)
  })

  it('[RET-007] gives a pre-uploaded file 30 days from the moment a Turn uses it', async () => {
    const file = await upload('/v1/files')
    await mock.clock.advance(3600)
    const boundAt = mock.clock.now().getTime()
    const res = await json('POST', `/v1/deployments/${D1}/sessions`, fileInput(file.file_id))
    expect(res.status).toBe(202)
    expect(expiresAt(file.file_id)).toBe(boundAt + 30 * DAY)
  })

  it('[RET-009] keeps a Run input file until the Run deadline, then until the end of the Run content retention', async () => {
    const file = await upload('/v1/files')
    const res = await json('POST', `/v1/workflows/${WF}/runs`, {
      published_version: 1,
      input: { topic: 'x' },
      file_ids: [file.file_id],
      limits: { run_seconds: 3600, retention_days: 2 },
    })
    expect(res.status).toBe(202)
    const { run_id } = (await res.json()) as { run_id: string }
    const run = async () => {
      const r = await mock.app.request(`/v1/runs/${run_id}`, {
        headers: { Authorization: `Bearer ${KEY}` },
      })
      return ((await r.json()) as { run: { deadline: string; expires_at: string | null } }).run
    }
    // While the Run runs, the file is kept at least until the deadline plus the content retention.
    const open = await run()
    expect(expiresAt(file.file_id)).toBe(Date.parse(open.deadline) + 2 * DAY)
    await mock.clock.advance(10)
    // Once the Run ended, exactly as long as the Run's content (its deadline has passed by then or is earlier).
    const ended = await run()
    expect(expiresAt(file.file_id)).toBe(Date.parse(ended.expires_at!))
  })
})
