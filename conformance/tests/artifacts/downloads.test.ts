/**
 * Download addresses (Endpoints > Files and artifacts; Authentication 9; Time limits): POST .../download issues
 * a one-use address valid at most 60 seconds, re-checking permission and never for deleted or expired files;
 * GET on the address needs no key, answers the file's bytes (no Range) and then never again. The document's
 * rules run on every target with a FILE output of the target's own making (support/file-outputs.ts: one
 * execution per file on a real target, every address a new one); expiry, retention, deletion and charges need
 * virtual time or the mock's control API.
 */
import { describe, expect, it } from 'vitest'
import { answeredAt, makeArtifact, mockControl, oneDeploymentKey } from '../../support/artifacts.js'
import { mockChoice } from '../../support/assertions.js'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { FILE_OUTPUT_ROLE, fileOutputs, type FileOutputItem } from '../../support/file-outputs.js'
import { req } from '../../support/req.js'
import { newIdempotencyKey } from '../../support/session-create.js'
import { role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { sample, sha256Hex } from '../../support/uploads.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()
const fileOutput = fileOutputs(target)

type DownloadReceipt = { url: string; expires_at: string }

const issue = (artifactId: string, key = target.world.keys.full) =>
  target.api.post(`/v1/artifacts/${artifactId}/download`, undefined, { key })

async function issued(artifactId: string): Promise<DownloadReceipt> {
  const res = await issue(artifactId)
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return res.body as DownloadReceipt
}

/** GET on a download address, with no Authorization header (the token replaces it). */
const fetchUrl = (url: string, headers?: Record<string, string>) => target.api.get(url, { headers })

const bytesOf = (res: ApiResponse): Buffer =>
  Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.text, 'utf8')

/** The answer is the whole file the output item describes: its length and its SHA-256 digest. */
function expectWholeFile(res: ApiResponse, item: FileOutputItem): void {
  const bytes = bytesOf(res)
  expect(bytes.byteLength, 'the bytes served against size_bytes').toBe(item.size_bytes)
  expect(sha256Hex(bytes), 'the bytes served against sha256').toBe(item.sha256)
}

/** The world's Project as the control API shows it (balance and the mock's download charge). */
async function project(): Promise<{ su_balance: number; download_su: number }> {
  const { projects } = await target.control!.fixtures()
  return projects.find((p) => p.id === target.world.projectId) as unknown as {
    su_balance: number
    download_su: number
  }
}

const balance = async (): Promise<number> => (await project()).su_balance

/** Settled SU of the file_storage_transfer category in GET /v1/usage (with a filter query). */
async function transferSu(query = ''): Promise<number> {
  const res = await target.api.get(`/v1/usage${query}`, { key: target.world.keys.full })
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  const body = res.body as { categories: Record<string, { settled_su: number }> }
  return body.categories.file_storage_transfer?.settled_su ?? 0
}

describe('artifact downloads', () => {
  it(`${req('FILE-004', 'ART-001', 'ART-004', 'RES-002')} issues 200 DownloadReceipt: a relative one-use path and expires_at at most 60 seconds ahead`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const res = await issue(item.artifact_id)
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    const body = res.body as DownloadReceipt
    expect(body.url).toMatch(
      new RegExp(`^/v1/artifacts/${item.artifact_id}/content\\?token=[^&\\s]+$`),
    )
    expect(Number.isNaN(Date.parse(body.expires_at)), body.expires_at).toBe(false)
    const at = await answeredAt(target, res)
    if (!at) return ctx.skip('the answer has no Date header: no server time to bound expires_at by')
    // A mock's virtual time is exact; a Date header is whole seconds written at or after the issue.
    const lifetime = Date.parse(body.expires_at) - at.ms
    expect(lifetime).toBeGreaterThan(-at.slackMs)
    expect(lifetime).toBeLessThanOrEqual(60_000 + at.slackMs)
  })

  it(`${req('ART-001', 'AUTH-004')} needs artifacts:read to issue an address: a key without it is refused (403 INSUFFICIENT_SCOPE on the mock)`, async (ctx) => {
    const key = role(ctx, target.world.keys.worksOnly, 'key without artifacts:read (works-only)')
    const { item } = await fileOutput(ctx)
    const res = await issue(item.artifact_id, key)
    // The works-only key has neither the scope nor the Deployment: the document gives 403 for the one and
    // 404 for the other and does not say which check comes first.
    expect([403, 404], res.text.slice(0, 300)).toContain(res.status)
    expectError(res, res.status === 403 ? 'INSUFFICIENT_SCOPE' : 'NOT_FOUND')
    await mockChoice(target, 'the missing scope is checked before access (403, not 404)', () => {
      expectError(res, 'INSUFFICIENT_SCOPE')
    })
  })

  it(`${req('AUTH-013', 'RES-003', 'OUT-007', 'FILE-002')} serves the FILE output's bytes on the address without a bearer key: size_bytes long, matching sha256`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const res = await fetchUrl((await issued(item.artifact_id)).url)
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    expectWholeFile(res, item)
    await mockChoice(target, "the download answer has the file's MIME type as Content-Type", () => {
      expect(res.headers['content-type']).toMatch(
        new RegExp(`^${item.mime_type.replace('/', '\\/')}`),
      )
    })
  })

  it(`${req('AUTH-013', 'RES-003', 'EP-001')} serves binary bytes unchanged, with their MIME type and length`, async (ctx) => {
    mockControl(target, ctx)
    const content = sample('pixel.png')
    const a = await makeArtifact(target, {
      filename: 'pixel.png',
      mimeType: 'image/png',
      content,
    })
    const res = await fetchUrl((await issued(a.artifact_id)).url)
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^image\/png/)
    expect(Number(res.headers['content-length'])).toBe(content.byteLength)
    expect(bytesOf(res).equals(content)).toBe(true)
    expect(sha256Hex(bytesOf(res))).toBe(a.sha256)
  })

  it(`${req('ART-005', 'FILE-004')} answers 404 NOT_FOUND on a second use of the same address; a new address works`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const { url } = await issued(item.artifact_id)
    expect((await fetchUrl(url)).status).toBe(200)
    expectError(await fetchUrl(url), 'NOT_FOUND')
    const again = await issued(item.artifact_id)
    expect(again.url).not.toBe(url)
    const res = await fetchUrl(again.url)
    expect(res.status).toBe(200)
    expectWholeFile(res, item)
  })

  it(`${req('ART-005', 'FILE-004')} gives a new address per issue, each usable once`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const first = await issued(item.artifact_id)
    const second = await issued(item.artifact_id)
    expect(second.url).not.toBe(first.url)
    expect((await fetchUrl(second.url)).status).toBe(200)
    expect((await fetchUrl(first.url)).status).toBe(200)
    expectError(await fetchUrl(second.url), 'NOT_FOUND')
    expectError(await fetchUrl(first.url), 'NOT_FOUND')
  })

  it(`${req('ART-004')} answers 404 NOT_FOUND once 60 seconds have passed`, async (ctx) => {
    const mock = mockControl(target, ctx)
    const a = await makeArtifact(target)
    const early = await issued(a.artifact_id)
    await mock.advance(59)
    expect((await fetchUrl(early.url)).status).toBe(200)
    const late = await issued(a.artifact_id)
    await mock.advance(60.001)
    expectError(await fetchUrl(late.url), 'NOT_FOUND')
  })

  it(`${req('AUTH-013')} serves nothing on the content path without the issued token (404 NOT_FOUND on the mock)`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const { url } = await issued(item.artifact_id)
    const token = new URL(url, 'http://x').searchParams.get('token')!
    for (const wrong of [
      `/v1/artifacts/${item.artifact_id}/content`,
      `/v1/artifacts/${item.artifact_id}/content?token=${token}x`,
    ]) {
      const res = await fetchUrl(wrong)
      // The document says an expired or used address is 404; of a missing or altered token only that the
      // token replaces authentication: a refusal (4xx) is the rule, NOT_FOUND the mock's answer.
      expect(res.status, wrong).toBeGreaterThanOrEqual(400)
      expect(res.status, wrong).toBeLessThan(500)
      await mockChoice(target, 'a missing or unknown download token is 404 NOT_FOUND', () => {
        expectError(res, 'NOT_FOUND')
      })
    }
    const res = await fetchUrl(url)
    expect(res.status).toBe(200)
    expectWholeFile(res, item)
  })

  it(`${req('ART-005', 'AUTH-013')} answers 404 NOT_FOUND for a missing, unknown or other artifact's token`, async (ctx) => {
    mockControl(target, ctx)
    const a = await makeArtifact(target)
    const b = await makeArtifact(target, { filename: 'other.txt' })
    const { url } = await issued(a.artifact_id)
    const token = new URL(url, 'http://x').searchParams.get('token')!
    expectError(await fetchUrl(`/v1/artifacts/${a.artifact_id}/content`), 'NOT_FOUND')
    expectError(
      await fetchUrl(`/v1/artifacts/${a.artifact_id}/content?token=${token}x`),
      'NOT_FOUND',
    )
    expectError(
      await fetchUrl(`/v1/artifacts/${b.artifact_id}/content?token=${token}`),
      'NOT_FOUND',
    )
    expect((await fetchUrl(url)).status).toBe(200)
  })

  it(`${req('ART-007')} never answers a Range request with 206: the whole file with 200, or a refusal`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const res = await fetchUrl((await issued(item.artifact_id)).url, { Range: 'bytes=0-3' })
    // "HTTP Range is not supported": a server may ignore the header (RFC 9110) and serve the whole file, or
    // refuse the request; a partial answer (206, Content-Range) is what the document excludes.
    expect(res.status).not.toBe(206)
    expect(res.headers['content-range']).toBeUndefined()
    if (res.status === 200) expectWholeFile(res, item)
    else {
      expect(res.status, res.text.slice(0, 300)).toBeGreaterThanOrEqual(400)
      expect(res.status, res.text.slice(0, 300)).toBeLessThan(500)
    }
    await mockChoice(target, 'a Range header is ignored: the whole file with 200', () => {
      expect(res.status).toBe(200)
    })
  })

  it(`${req('ART-007')} ignores Range on a content the mock was given: the whole file with 200, never 206`, async (ctx) => {
    mockControl(target, ctx)
    const content = 'abcdefghijklmnopqrstuvwxyz'
    const a = await makeArtifact(target, { content })
    const res = await fetchUrl((await issued(a.artifact_id)).url, { Range: 'bytes=0-3' })
    expect(res.status).toBe(200)
    expect(bytesOf(res).toString('utf8')).toBe(content)
    expect(res.headers['content-range']).toBeUndefined()
  })

  it(`${req('ART-002', 'AUTH-003', 'AUTH-009')} re-checks permission at every issue: a key without access to the Deployment gets no address`, async (ctx) => {
    const key = role(ctx, target.world.keys.oneDeployment, 'key limited to one Deployment')
    // A mock makes the FILE output on a Deployment outside the key's; a real target has its fileOutput one.
    const fileDeployment = target.control
      ? undefined
      : role(ctx, target.world.deployments.fileOutput, FILE_OUTPUT_ROLE)
    const { allowed, others } = await oneDeploymentKey(target, key)
    const deploymentId = fileDeployment ?? others[0]
    if (deploymentId === undefined || deploymentId === allowed)
      return ctx.skip(
        'the world has no FILE-output Deployment outside the key limited to one Deployment',
      )
    const { item } = await fileOutput(ctx, { deploymentId })
    expect((await issue(item.artifact_id)).status).toBe(200)
    expectError(await issue(item.artifact_id, key), 'NOT_FOUND')
    const { revoked } = target.world.keys
    if (revoked) expectError(await issue(item.artifact_id, revoked), 'INVALID_API_KEY')
  })

  it(`${req('ART-006', 'ERR-055')} issues no address for an artifact past retention (410 ARTIFACT_EXPIRED)`, async (ctx) => {
    const mock = mockControl(target, ctx)
    const a = await makeArtifact(target, { retentionSeconds: 30 })
    const { url } = await issued(a.artifact_id)
    await mock.advance(30)
    expectError(await issue(a.artifact_id), 'ARTIFACT_EXPIRED')
    expectError(await fetchUrl(url), 'NOT_FOUND')
  })

  it(`${req('ART-006')} issues no address for a deleted artifact, and an earlier address stops working`, async (ctx) => {
    const mock = mockControl(target, ctx)
    const a = await makeArtifact(target)
    const { url } = await issued(a.artifact_id)
    await mock.deleteArtifact(a.artifact_id)
    expectError(await issue(a.artifact_id), 'ARTIFACT_EXPIRED')
    expectError(await fetchUrl(url), 'NOT_FOUND')
  })

  it(`${req('ART-006', 'DEL-001', 'RET-004')} issues no address once the FILE output's Session is deleted, and an earlier address serves nothing`, async (ctx) => {
    // Its own execution: the deletion takes the artifact away from any other check.
    const { item, receipt } = await fileOutput(ctx, { fresh: true })
    const { url } = await issued(item.artifact_id)
    const deleted = await target.api.delete(
      `/v1/sessions/${receipt.session_id}`,
      {},
      { key: target.world.keys.full, idem: newIdempotencyKey('delete') },
    )
    expect(deleted.status, deleted.text.slice(0, 300)).toBe(202)
    // "Deleted files are not issued again"; which code says so is not shown (on the mock the deleted Session's
    // content is blocked: 404 NOT_FOUND, as for an absent artifact).
    const again = await issue(item.artifact_id)
    expect(again.status, again.text.slice(0, 300)).toBeGreaterThanOrEqual(400)
    expect(again.status, again.text.slice(0, 300)).toBeLessThan(500)
    await mockChoice(target, 'an artifact of a deleted Session is 404 NOT_FOUND at issue', () => {
      expectError(again, 'NOT_FOUND')
    })
    const served = await fetchUrl(url)
    expect(served.status, 'an address of a deleted file').toBeGreaterThanOrEqual(400)
    expect(served.status).toBeLessThan(500)
    await mockChoice(target, 'an address of a deleted file is 404 NOT_FOUND', () => {
      expectError(served, 'NOT_FOUND')
    })
  })

  it(`${req('ART-003', 'BUD-009')} does not charge for issuing an address`, async (ctx) => {
    mockControl(target, ctx)
    const a = await makeArtifact(target)
    const before = await balance()
    for (let i = 0; i < 3; i++) await issued(a.artifact_id)
    expect(await balance()).toBe(before)
  })

  it(`${req('ART-003', 'BUD-009', 'BUD-006')} charges an address when it is consumed, once, in file_storage_transfer`, async (ctx) => {
    mockControl(target, ctx)
    // The amount is the mock's fixture value (the document names none), read from the fixtures, never typed.
    const amount = (await project()).download_su
    expect(amount).toBeGreaterThan(0)
    const a = await makeArtifact(target)
    const filter = `?deployment_id=${target.world.deployments.active}`
    const [before, beforeFiltered, beforeBalance] = [
      await transferSu(),
      await transferSu(filter),
      await balance(),
    ]
    const first = await issued(a.artifact_id)
    const second = await issued(a.artifact_id)
    expect(await transferSu()).toBe(before)
    expect((await fetchUrl(first.url)).status).toBe(200)
    const after = await transferSu()
    expect(after).toBeCloseTo(before + amount, 6)
    expect(await transferSu(filter)).toBeCloseTo(beforeFiltered + amount, 6)
    expect(await balance()).toBeCloseTo(beforeBalance - amount, 6)
    // A used address answers 404 and costs nothing more; an address never consumed costs nothing.
    expectError(await fetchUrl(first.url), 'NOT_FOUND')
    await target.control!.advance(61)
    expectError(await fetchUrl(second.url), 'NOT_FOUND')
    expect(await transferSu()).toBeCloseTo(after, 6)
    expect(await balance()).toBeCloseTo(beforeBalance - amount, 6)
  })

  it(`${req('BUD-008', 'ERR-079')} refuses to issue an address below 50 SU with 402 MINIMUM_SU_REQUIRED`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    const mock = mockControl(target, ctx)
    const a = await makeArtifact(target)
    await mock.setBalance(target.world.projectId, 49)
    expectError(await issue(a.artifact_id), 'MINIMUM_SU_REQUIRED')
    await mock.setBalance(target.world.projectId, 50)
    expect((await issue(a.artifact_id)).status).toBe(200)
  })
})
