/**
 * GET /v1/artifacts/{artifact_id} (Endpoints > Files and artifacts; Resources > Files): ArtifactDetail with
 * artifacts:read, isolation, and retention (410 ARTIFACT_EXPIRED, never extended by reading). Mock-only:
 * artifacts are made through the control API.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { makeArtifact, mockControl, nowMs } from '../../support/artifacts.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { sha256Hex } from '../../support/uploads.js'

const target = useTarget()

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

const read = (id: string, key = target.world.keys.full) =>
  target.api.get(`/v1/artifacts/${id}`, { key })

describe('artifact detail', () => {
  it(`${req('FILE-003', 'ART-008', 'RES-001', 'RES-005')} answers 200 ArtifactDetail with every field, metadata only`, async (ctx) => {
    mockControl(target, ctx)
    const content = 'quarterly report\n'
    const a = await makeArtifact(target, { content })
    const res = await read(a.artifact_id)
    expect(res.status).toBe(200)
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
      id: a.artifact_id,
      status: 'READY',
      filename: 'report.txt',
      mime_type: 'text/plain',
      size_bytes: Buffer.byteLength(content),
      sha256: sha256Hex(content),
    })
    expect(body.file_id).toMatch(/^[0-9a-f-]{36}$/)
  })

  it(`${req('ART-008', 'AUTH-004')} needs artifacts:read: a key without it gets 403 INSUFFICIENT_SCOPE`, async (ctx) => {
    mockControl(target, ctx)
    const key = target.world.keys.worksOnly
    if (!key) return ctx.skip("the target's world has no key without artifacts:read")
    const a = await makeArtifact(target)
    expectError(await read(a.artifact_id, key), 'INSUFFICIENT_SCOPE')
  })

  it(`${req('SVC-002', 'AUTH-009')} answers 404 NOT_FOUND for another Project's artifact, as for an absent one`, async (ctx) => {
    mockControl(target, ctx)
    const other = target.world.keys.otherProject
    if (!other) return ctx.skip("the target's world has no key of another Project")
    const a = await makeArtifact(target)
    expectError(await read(a.artifact_id, other), 'NOT_FOUND')
    expectError(await read(randomUUID()), 'NOT_FOUND')
  })

  it(`${req('AUTH-003')} answers 404 NOT_FOUND for an artifact of a Deployment the key may not call`, async (ctx) => {
    mockControl(target, ctx)
    const { oneDeployment } = target.world.keys
    const { active2 } = target.world.deployments
    if (!oneDeployment || !active2)
      return ctx.skip(
        "the target's world has no key limited to one Deployment and a second Deployment",
      )
    const a = await makeArtifact(target, { deploymentId: active2 })
    expect((await read(a.artifact_id)).status).toBe(200)
    expectError(await read(a.artifact_id, oneDeployment), 'NOT_FOUND')
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
