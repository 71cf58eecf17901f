/**
 * GET /v1/artifacts/{artifact_id} (Endpoints > Files and artifacts; Resources > Files): ArtifactDetail with
 * artifacts:read, isolation, and retention (410 ARTIFACT_EXPIRED, never extended by reading). The document's
 * rules run on every target with a FILE output of the target's own making (support/file-outputs.ts: one
 * execution per file on a real target); the retention rules need an artifact of a chosen retention and virtual
 * time, made through the mock's control API.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { makeArtifact, mockControl, nowMs, oneDeploymentKey } from '../../support/artifacts.js'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { FILE_OUTPUT_ROLE, fileOutputs } from '../../support/file-outputs.js'
import { req } from '../../support/req.js'
import { role } from '../../support/skip.js'
import { sha256Hex } from '../../support/uploads.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()
const fileOutput = fileOutputs(target)

type ArtifactDetail = {
  id: string
  file_id: string
  status: string
  filename: string
  mime_type: string
  size_bytes: number
  sha256: string
  expires_at: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const read = (id: string, key = target.world.keys.full) =>
  target.api.get(`/v1/artifacts/${id}`, { key })

describe('artifact detail', () => {
  it(`${req('OUT-007', 'RES-001')} gives a FILE output item artifact_id (uuid), filename, mime_type, size_bytes (integer >= 0) and sha256`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    expect(item.artifact_id).toMatch(UUID)
    expect(typeof item.filename).toBe('string')
    expect(typeof item.mime_type).toBe('string')
    expect(Number.isInteger(item.size_bytes) && item.size_bytes >= 0, String(item.size_bytes)).toBe(
      true,
    )
    expect(item.sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it(`${req('FILE-003', 'ART-008', 'RES-001', 'RES-002', 'RES-005')} answers 200 ArtifactDetail with every field, metadata only, describing the FILE output`, async (ctx) => {
    const { item } = await fileOutput(ctx)
    const res = await read(item.artifact_id)
    expect(res.status, res.text.slice(0, 300)).toBe(200)
    // Metadata only: a JSON body, never the file's bytes.
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    const body = res.body as ArtifactDetail
    // Every documented field; an undocumented one is the unknown_response_fields check's (strictness.ts).
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining([
        'expires_at',
        'file_id',
        'filename',
        'id',
        'mime_type',
        'sha256',
        'size_bytes',
        'status',
      ]),
    )
    expect(body).toMatchObject({
      id: item.artifact_id,
      status: 'READY',
      filename: item.filename,
      mime_type: item.mime_type,
      size_bytes: item.size_bytes,
      sha256: item.sha256,
    })
    expect(body.file_id).toMatch(UUID)
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/)
    expect(Number.isNaN(Date.parse(body.expires_at))).toBe(false)
  })

  it(`${req('FILE-003', 'ART-008')} describes a content the mock was given: its filename, type, length and digest`, async (ctx) => {
    mockControl(target, ctx)
    const content = 'quarterly report\n'
    const a = await makeArtifact(target, { content })
    const res = await read(a.artifact_id)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      id: a.artifact_id,
      status: 'READY',
      filename: 'report.txt',
      mime_type: 'text/plain',
      size_bytes: Buffer.byteLength(content),
      sha256: sha256Hex(content),
    })
  })

  it(`${req('ART-008', 'AUTH-004')} needs artifacts:read: a key without it is refused (403 INSUFFICIENT_SCOPE on the mock)`, async (ctx) => {
    const key = role(ctx, target.world.keys.worksOnly, 'key without artifacts:read (works-only)')
    const { item } = await fileOutput(ctx)
    const res = await read(item.artifact_id, key)
    // The works-only key has neither the scope nor the Deployment: the document gives 403 for the one and
    // 404 for the other and does not say which check comes first.
    expect([403, 404], res.text.slice(0, 300)).toContain(res.status)
    expectError(res, res.status === 403 ? 'INSUFFICIENT_SCOPE' : 'NOT_FOUND')
    await mockChoice(target, 'the missing scope is checked before access (403, not 404)', () => {
      expectError(res, 'INSUFFICIENT_SCOPE')
    })
  })

  it(`${req('SVC-002', 'AUTH-009')} answers 404 NOT_FOUND for another Project's artifact, as for an absent one`, async (ctx) => {
    const other = role(ctx, target.world.keys.otherProject, 'key of another Project')
    const { item } = await fileOutput(ctx)
    expectError(await read(item.artifact_id, other), 'NOT_FOUND')
    expectError(await read(randomUUID(), other), 'NOT_FOUND')
    expectError(await read(randomUUID()), 'NOT_FOUND')
  })

  it(`${req('AUTH-003', 'AUTH-009')} answers 404 NOT_FOUND for an artifact of a Deployment the key may not call`, async (ctx) => {
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
    expect((await read(item.artifact_id)).status).toBe(200)
    expectError(await read(item.artifact_id, key), 'NOT_FOUND')
  })

  it(`${req('ERR-055', 'RET-013', 'RET-014')} answers 410 ARTIFACT_EXPIRED exactly from expires_at`, async (ctx) => {
    const mock = mockControl(target, ctx)
    const a = await makeArtifact(target, { retentionSeconds: 3600 })
    const expiresAt = Date.parse(a.expires_at)
    await mock.advance((expiresAt - (await nowMs(target))) / 1000 - 1)
    expect((await read(a.artifact_id)).status).toBe(200)
    await mock.advance(1)
    expectError(await read(a.artifact_id), 'ARTIFACT_EXPIRED')
  })

  it(`${req('RET-012')} does not extend retention by reading`, async (ctx) => {
    const mock = mockControl(target, ctx)
    const a = await makeArtifact(target, { retentionSeconds: 600 })
    for (let i = 0; i < 5; i++) {
      const res = await read(a.artifact_id)
      expect(res.status).toBe(200)
      expect((res.body as ArtifactDetail).expires_at).toBe(a.expires_at)
      await mock.advance(100)
    }
    await mock.advance(100)
    expectError(await read(a.artifact_id), 'ARTIFACT_EXPIRED')
  })
})
