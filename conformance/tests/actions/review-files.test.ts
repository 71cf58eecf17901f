/**
 * Review files of an approval (Approval handling rule 4): a file a person reviews for a decision is read through
 * artifact download with artifacts:read and the action's approval permission (actions:approve). Mock only: the
 * interactive-action facility is switched on with the control API and the `needs-approval` scenario holds a
 * stage at 2 s with a review file listed in the approval content's review_files (an assumed field).
 */
import { describe, expect, it, type TestContext } from 'vitest'
import { makeArtifact } from '../../support/artifacts.js'
import type { ApiResponse } from '../../support/client.js'
import {
  readAction,
  runAtAction,
  setKeyScopes,
  type ApprovalContentView,
} from '../../support/actions.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { probesClientRule } from '../../support/probes.js'
import { role } from '../../support/skip.js'
import { sha256Hex } from '../../support/uploads.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

/** A Run held at its stage hold and the review file its approval lists. */
async function reviewFile(ctx: TestContext) {
  const { control, run_id, run } = await runAtAction(ctx, target, 'needs-approval')
  const action = run.required_actions?.[0]
  expect(action, JSON.stringify(run)).toBeDefined()
  const res = await readAction(target, run_id, action!.id)
  expect(res.status, res.text).toBe(200)
  const file = (res.body as ApprovalContentView).review_files?.[0]
  expect(file, res.text).toBeDefined()
  return { control, file: file! }
}

const readArtifact = (artifactId: string, key: string) =>
  target.api.get(`/v1/artifacts/${artifactId}`, { key })
const issue = (artifactId: string, key: string) =>
  target.api.post(`/v1/artifacts/${artifactId}/download`, undefined, { key })
const bytesOf = (res: ApiResponse): Buffer =>
  Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.text, 'utf8')

describe('review files of an approval', () => {
  it(`${req('ACT-021', 'ART-001')} downloads a review file with artifacts:read and actions:approve; the bytes match its sha256`, async (ctx) => {
    const { file } = await reviewFile(ctx)
    const full = target.world.keys.full
    const detail = await readArtifact(file.artifact_id, full)
    expect(detail.status, detail.text).toBe(200)
    expect(detail.body).toMatchObject({ id: file.artifact_id, sha256: file.sha256 })
    const issued = await issue(file.artifact_id, full)
    expect(issued.status, issued.text).toBe(200)
    const got = await target.api.get((issued.body as { url: string }).url)
    expect(got.status).toBe(200)
    expect(sha256Hex(bytesOf(got))).toBe(file.sha256)
    expect(bytesOf(got).byteLength).toBe(file.size_bytes)
  })

  it(`${req('ACT-021')} refuses a review file to a key with artifacts:read but without actions:approve, while its other artifacts stay readable`, async (ctx) => {
    const { file } = await reviewFile(ctx)
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    expectError(await readArtifact(file.artifact_id, readOnly), 'INSUFFICIENT_SCOPE')
    expectError(await issue(file.artifact_id, readOnly), 'INSUFFICIENT_SCOPE')
    // An ordinary result file needs artifacts:read only: the refusal is about the review file.
    const plain = await makeArtifact(target)
    expect((await issue(plain.artifact_id, readOnly)).status).toBe(200)
  })

  it(`${req('ACT-021', 'ART-002')} re-checks the approval permission at every issue: withdrawn, no new address`, async (ctx) => {
    // The same issue is sent again after a refusal on purpose: the key's scopes changed in between.
    probesClientRule(ctx, 'RETRY-001')
    const { file } = await reviewFile(ctx)
    const full = target.world.keys.full
    const before = await issue(file.artifact_id, full)
    expect(before.status).toBe(200)
    const fixtures = await target.control!.fixtures()
    const scopes = fixtures.projects
      .flatMap((p) => p.api_keys)
      .find((k) => k.key === full)!
      .scopes.filter((s) => s !== 'actions:approve')
    await setKeyScopes(target, full, scopes)
    expectError(await issue(file.artifact_id, full), 'INSUFFICIENT_SCOPE')
    // With actions:approve but without artifacts:read it is refused as well.
    await setKeyScopes(target, full, ['runs:read', 'actions:approve'])
    expectError(await issue(file.artifact_id, full), 'INSUFFICIENT_SCOPE')
  })
})
