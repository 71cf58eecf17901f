/**
 * Workflows and Runs as the suite sends them: a valid Run request built from the workflow's own description
 * (published_version and a minimal input satisfying input_schema), Run creation with fresh Idempotency-Keys and
 * 429s paced away, Run reads, and the mock's Workflow/Run control extensions (publish, stop,
 * external-effect-unknown), which exist only on a mock target.
 */
import { expect } from 'vitest'
import { mockChoice } from './assertions.js'
import type { ApiResponse } from './client.js'
import { expectError } from './expect-error.js'
import { retryRateLimited as paced } from './pace.js'
import { newIdempotencyKey } from './session-create.js'
import type { Target } from './target.js'

export type RunReceipt = {
  run_id: string
  status_url: string
  events_url: string
  idempotency_expires_at: string
}

export type RunView = {
  id: string
  workflow_id: string
  published_version: number
  status: string
  phase: string | null
  usage: { status: 'PENDING' | 'FINAL'; total_su: number | null }
  error: { code: string; retryable?: boolean } | null
  metadata: Record<string, string>
  created_at: string
  deadline: string | null
  completed_at: string | null
  expires_at: string | null
  progress: { total: number; completed: number }
}

export type OutputView = {
  id: string
  key: string
  type: string
  error: { code: string } | null
} & Record<string, unknown>

export type RunDetailView = { run: RunView; outputs: OutputView[]; next_cursor: string | null }

export type WorkflowView = {
  published_version: number
  input_schema: Record<string, unknown>
  outputs: Record<string, unknown>[]
  available: boolean
  limits: Record<string, unknown>
  error?: { code: string } | null
}

export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set([
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
])

/**
 * The mock's approval-gated workflow (fixtures/default-world.json, Project A). The world view does not carry
 * needs_approval, so tests of that rule name it and run on the mock only.
 */
export const MOCK_APPROVAL_WORKFLOW = 'aaaaaaaa-f000-4000-8000-000000000003'

export const runsPath = (workflowId: string): string => `/v1/workflows/${workflowId}/runs`

/** GET /v1/workflows/{id} with the full key. */
export async function readWorkflow(target: Target, id: string): Promise<WorkflowView> {
  const res = await paced(target, () =>
    target.api.get(`/v1/workflows/${id}`, { key: target.world.keys.full }),
  )
  if (res.status !== 200)
    throw new Error(`GET workflow ${id}: ${res.status} ${res.text.slice(0, 200)}`)
  return res.body as WorkflowView
}

/** A minimal value satisfying a (simple) JSON Schema: required properties only, bounds respected. */
export function sampleInput(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
  const out: Record<string, unknown> = {}
  for (const name of (schema.required ?? []) as string[]) {
    const p = props[name] ?? {}
    switch (p.type) {
      case 'integer':
      case 'number':
        out[name] = (p.minimum as number | undefined) ?? 1
        break
      case 'boolean':
        out[name] = true
        break
      case 'object':
        out[name] = sampleInput(p)
        break
      case 'array':
        out[name] = []
        break
      default:
        out[name] = 'conformance'.padEnd((p.minLength as number | undefined) ?? 1, 'x')
    }
  }
  return out
}

/** A valid Run request body for the workflow's current publication, with overrides. */
export async function validRunBody(
  target: Target,
  workflowId: string,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const w = await readWorkflow(target, workflowId)
  return {
    published_version: w.published_version,
    input: sampleInput(w.input_schema),
    ...overrides,
  }
}

export type CreateRunOptions = { key?: string; idem?: string | null; pace?: boolean }

/** POST /v1/workflows/{id}/runs (fresh Idempotency-Key unless given; null sends none). */
export function postRun(
  target: Target,
  workflowId: string,
  body: unknown,
  opts: CreateRunOptions = {},
): Promise<ApiResponse> {
  const idem = opts.idem === null ? undefined : (opts.idem ?? newIdempotencyKey('run'))
  const send = () =>
    target.api.post(runsPath(workflowId), body, { key: opts.key ?? target.world.keys.full, idem })
  return opts.pace === false ? send() : paced(target, send)
}

/** Creates a valid Run and returns its receipt (fails the test otherwise). */
export async function startRun(
  target: Target,
  workflowId: string,
  overrides: Record<string, unknown> = {},
): Promise<RunReceipt> {
  const res = await postRun(target, workflowId, await validRunBody(target, workflowId, overrides))
  if (res.status !== 202) throw new Error(`createRun: ${res.status} ${res.text.slice(0, 300)}`)
  return res.body as RunReceipt
}

/** GET /v1/runs/{id}. */
export const getRun = (target: Target, id: string, key = target.world.keys.full) =>
  paced(target, () => target.api.get(`/v1/runs/${id}`, { key }))

/** The Run read body (expects 200). */
export async function readRun(target: Target, id: string): Promise<RunDetailView> {
  const res = await getRun(target, id)
  if (res.status !== 200) throw new Error(`GET run ${id}: ${res.status} ${res.text.slice(0, 200)}`)
  return res.body as RunDetailView
}

/** POST /v1/runs/{id}/cancel with {} and a fresh Idempotency-Key. */
export const cancelRun = (target: Target, id: string, key = target.world.keys.full) =>
  paced(target, () =>
    target.api.post(`/v1/runs/${id}/cancel`, {}, { key, idem: newIdempotencyKey('cancel') }),
  )

/** DELETE /v1/runs/{id} with {} (fresh Idempotency-Key unless given). */
export const deleteRun = (target: Target, id: string, idem = newIdempotencyKey('delete')) =>
  paced(target, () =>
    target.api.delete(`/v1/runs/${id}`, {}, { key: target.world.keys.full, idem }),
  )

async function mockCall<T>(target: Target, path: string, body: unknown = {}): Promise<T> {
  const res = await target.api.send('POST', path, body, { check: false })
  if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${res.text.slice(0, 300)}`)
  return res.body as T
}

/** Mock extension: republishes a workflow (published_version + 1; optional new steps, outputs, ...). */
export const publishWorkflow = (target: Target, id: string, patch: Record<string, unknown> = {}) =>
  mockCall<{ id: string; published_version: number }>(
    target,
    `/_mock/workflows/${id}/publish`,
    patch,
  )

/** Mock extension: stops a workflow; its non-terminal Runs end CANCELED with WORKFLOW_UNAVAILABLE. */
export const stopWorkflow = (target: Target, id: string) =>
  mockCall<{ id: string; canceled: string[] }>(target, `/_mock/workflows/${id}/stop`)

/** Mock extension: the Run's cancel cannot confirm an external effect (ends FAILED EXTERNAL_EFFECT_UNKNOWN). */
export const externalEffectUnknown = (target: Target, runId: string) =>
  mockCall<unknown>(target, `/_mock/runs/${runId}/external-effect-unknown`)

/**
 * DEL-001: a read of a deleted Session's or Run's content is blocked at once ("content reads are blocked
 * immediately"). The document names no status for it: 404 (absent) and 410 (content gone; only "minimal
 * billing and audit identifiers are kept without content") are both readings of its status table, so a real
 * target may answer either with an error envelope; the mock answers 404 NOT_FOUND.
 */
export async function expectContentBlocked(target: Target, res: ApiResponse): Promise<void> {
  const error = (res.body as { error?: { code?: unknown } } | undefined)?.error
  expect([404, 410], `a blocked read, got ${res.status} ${res.text.slice(0, 200)}`).toContain(
    res.status,
  )
  expect(typeof error?.code).toBe('string')
  if (res.status === 404) expectError(res, 'NOT_FOUND')
  await mockChoice(target, 'a deleted Session or Run is 404 NOT_FOUND', () => {
    expectError(res, 'NOT_FOUND')
  })
}
