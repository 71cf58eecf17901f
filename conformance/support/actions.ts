/**
 * Interactive actions as the suite sends them: the mock's control calls that switch the facility on
 * (POST /_mock/projects/{id}/interactive-actions) and change review content (POST
 * /_mock/runs/{id}/actions/{action_id}/change-content), and the Run action paths with fresh Idempotency-Keys.
 */
import { expect, type TestContext } from 'vitest'
import type { ApiResponse } from './client.js'
import { retryRateLimited as paced } from './pace.js'
import { readRun, startRun, type RunView } from './runs.js'
import { newIdempotencyKey } from './session-create.js'
import { mockOnly, role } from './skip.js'
import type { Target } from './target.js'

/** A required_actions element (the mock's assumed shape; the document does not show it). */
export type RequiredActionView = {
  id: string
  kind: 'APPROVAL' | 'QUESTION'
  status: string
  expires_at: string
  resolve_url: string
  approval_kind?: 'STAGE_HOLD' | 'RESULT_CONFIRMATION'
  decisions?: string[]
  content_url?: string
  questions?: { id: string; options: { id: string }[]; multi_select: boolean }[]
}

export type ApprovalContentView = {
  kind: 'STAGE_HOLD' | 'RESULT_CONFIRMATION'
  content_hash: string
  decisions: string[]
  rows?: Record<string, unknown>[]
  summary?: string
  /** The files a person reviews (assumed field), read through artifact download. */
  review_files?: {
    artifact_id: string
    filename: string
    mime_type: string
    size_bytes: number
    sha256: string
  }[]
}

async function mockPost<T>(target: Target, path: string, body: unknown): Promise<T> {
  const res = await target.api.send('POST', path, body, { check: false })
  expect(res.status, `POST ${path}: ${res.text.slice(0, 300)}`).toBe(200)
  return res.body as T
}

/** Mock extension: turns a Project's interactive-action facility on or off. */
export const setInteractiveActions = (target: Target, projectId: string, enabled: boolean) =>
  mockPost<{ project_id: string; enabled: boolean }>(
    target,
    `/_mock/projects/${projectId}/interactive-actions`,
    { enabled },
  )

/** Mock extension: changes an approval's review content (default: the summary is revised). */
export const changeContent = (
  target: Target,
  runId: string,
  actionId: string,
  patch: { summary?: string; rows?: Record<string, unknown>[]; available?: boolean } = {},
) =>
  mockPost<{ action_id: string; content_hash: string }>(
    target,
    `/_mock/runs/${runId}/actions/${actionId}/change-content`,
    patch,
  )

/** Mock extension: replaces a key's scopes. */
export const setKeyScopes = (target: Target, key: string, scopes: string[]) =>
  mockPost<{ key: string; scopes: string[] }>(target, `/_mock/keys/${key}/scopes`, { scopes })

/** GET /v1/runs/{run_id}/actions/{action_id}. */
export const readAction = (target: Target, runId: string, actionId: string, key?: string) =>
  paced(target, () =>
    target.api.get(`/v1/runs/${runId}/actions/${actionId}`, {
      key: key ?? target.world.keys.full,
    }),
  )

/** POST /v1/runs/{run_id}/actions/{action_id}/resolve (fresh Idempotency-Key unless given). */
export const resolveRunAction = (
  target: Target,
  runId: string,
  actionId: string,
  body: unknown,
  opts: { key?: string; idem?: string } = {},
): Promise<ApiResponse> =>
  paced(target, () =>
    target.api.post(`/v1/runs/${runId}/actions/${actionId}/resolve`, body, {
      key: opts.key ?? target.world.keys.full,
      idem: opts.idem ?? newIdempotencyKey('resolve'),
    }),
  )

/** An ApprovalResolveInput. */
export const approval = (decision: string, content_hash: string) => ({
  decision,
  content_hash,
  actor: { subject: 'employee-4711' },
})

/** A Run as its detail shows it, with its required actions. */
export type RunWithActions = RunView & { required_actions?: RequiredActionView[] }

/**
 * Mock only: the facility switched on (unless `enabled` is false), `scenario` queued for the available
 * workflow, a Run started and advanced 2 seconds, to its first action; the Run as it then reads.
 */
export async function runAtAction(
  ctx: TestContext,
  target: Target,
  scenario: string,
  enabled = true,
) {
  const control = mockOnly(ctx, target, 'switches the facility on and moves virtual time')
  const wf = role(ctx, target.world.workflows.available, 'available workflow')
  if (enabled) await setInteractiveActions(target, target.world.projectId, true)
  await control.queueScenario(wf, scenario)
  const { run_id } = await startRun(target, wf)
  await control.advance(2)
  const run = (await readRun(target, run_id)).run as RunWithActions
  return { control, run_id, run }
}
