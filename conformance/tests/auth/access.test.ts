/**
 * Access rules (What the service does; Authentication 3 and 5): the private-beta gate, Project and Deployment
 * isolation answered exactly like absence, delegated access, and scopes.
 */
import { describe, expect, it } from 'vitest'
import { idempotencyKeyOfBytes } from '../../arbitraries/headers.js'
import { mockChoice } from '../../support/assertions.js'
import type { ApiResponse } from '../../support/client.js'
import {
  delegatedAccessNames,
  documentedOperations,
  samplePath,
  v1Operations,
} from '../../support/documented.js'
import { expectError } from '../../support/expect-error.js'
import { retryRateLimited } from '../../support/pace.js'
import { req } from '../../support/req.js'
import { createSession, newIdempotencyKey } from '../../support/session-create.js'
import { assumedRule, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

/** The error object without request_id (new per request), to compare two 404s. */
const errorWithoutRequestId = (res: ApiResponse) => {
  const { request_id: _id, ...rest } = (res.body as { error: Record<string, unknown> }).error
  return rest
}

/**
 * "A resource outside the key's access: 404 NOT_FOUND (existence not revealed)": the same code, status and
 * retryable flag as for an absent id. That the message and details are the very same text is the mock's
 * choice (a message may name the id asked for; "message is English text and may change").
 */
async function expectLikeAbsent(foreign: ApiResponse, absent: ApiResponse): Promise<void> {
  expectError(foreign, 'NOT_FOUND')
  expectError(absent, 'NOT_FOUND')
  expect(foreign.status).toBe(absent.status)
  await mockChoice(
    target,
    'an id outside access gets the very message and details of an absent id',
    () => {
      expect(errorWithoutRequestId(foreign)).toEqual(errorWithoutRequestId(absent))
    },
  )
}

const helloFile = { content: 'hello\n', filename: 'hello.txt', contentType: 'text/plain' }

/** The scopes the document names for an operation (spec/openapi.yaml security, not x-assumed-scope). */
const namedScopes = (operationId: string): string[] => {
  const op = documentedOperations().find((o) => o.operationId === operationId)!
  expect(op.scopeNamed, `${operationId} has a scope named by the document`).toBe(true)
  return op.scopes.flat()
}

/** The smallest instance of a JSON schema's required properties (strings, numbers, booleans, nested objects). */
function minimalInstance(schema: Record<string, unknown> | undefined): unknown {
  if (!schema) return {}
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  switch (type) {
    case 'string':
      return 'x'.repeat(Math.max(1, Number(schema.minLength ?? 1)))
    case 'integer':
    case 'number':
      return Number(schema.minimum ?? 1)
    case 'boolean':
      return true
    case 'array':
      return []
    default: {
      const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
      const required = (schema.required ?? []) as string[]
      return Object.fromEntries(required.map((name) => [name, minimalInstance(props[name])]))
    }
  }
}

/** A valid Run request body for a Workflow, read with the full key. */
async function runBody(workflowId: string): Promise<Record<string, unknown>> {
  const res = await retryRateLimited(target, () =>
    target.api.get(`/v1/workflows/${workflowId}`, { key: target.world.keys.full }),
  )
  expect(res.status, res.text).toBe(200)
  const wf = res.body as { published_version: number; input_schema?: Record<string, unknown> }
  return { published_version: wf.published_version, input: minimalInstance(wf.input_schema) }
}

/** Starts a Run with the full key and returns its id. */
async function startRun(workflowId: string): Promise<string> {
  const body = await runBody(workflowId)
  const res = await retryRateLimited(target, () =>
    target.api.post(`/v1/workflows/${workflowId}/runs`, body, {
      key: target.world.keys.full,
      idem: newIdempotencyKey('run'),
    }),
  )
  expect(res.status, res.text).toBe(202)
  return (res.body as { run_id: string }).run_id
}

describe('access', () => {
  it.for(v1Operations().map((op) => [`${op.method} ${op.template}`, op] as const))(
    `${req('SVC-006', 'ERR-026')} answers NOT_FOUND to a key of a Project not approved for the beta: %s`,
    async ([, op], ctx) => {
      const key = role(ctx, target.world.keys.unapproved, 'key of an unapproved Project')
      const res = await target.api.send(op.method, samplePath(op.template), undefined, {
        key,
        idem: op.idempotent ? newIdempotencyKey('gate') : undefined,
      })
      expectError(res, 'NOT_FOUND')
    },
  )

  it(`${req('SVC-006', 'ERR-026')} answers NOT_FOUND on an undocumented /v1 path to a key of a Project not approved for the beta`, async (ctx) => {
    const key = role(ctx, target.world.keys.unapproved, 'key of an unapproved Project')
    for (const [method, path] of [
      ['GET', '/v1/no-such-resource'],
      ['POST', `/v1/deployments/${samplePath('{id}')}/no-such-action`],
      ['DELETE', '/v1/deployments'],
    ] as const) {
      expectError(await target.api.send(method, path, undefined, { key }), 'NOT_FOUND')
    }
  })

  it(`${req('SVC-002', 'AUTH-009', 'DEP-009')} answers another Project's Deployment exactly like an absent one`, async (ctx) => {
    const other = role(ctx, target.world.deployments.otherProject, "another Project's Deployment")
    const key = target.world.keys.full
    const foreign = await target.api.get(`/v1/deployments/${other}`, { key })
    const absent = await target.api.get(`/v1/deployments/${samplePath('{id}')}`, { key })
    await expectLikeAbsent(foreign, absent)
  })

  it(`${req('SVC-002', 'AUTH-009')} refuses a Session on another Project's Deployment exactly like on an absent one`, async (ctx) => {
    const other = role(ctx, target.world.deployments.otherProject, "another Project's Deployment")
    const body = { input: [{ type: 'TEXT', text: 'hello' }] }
    const foreign = await createSession(target, body, { deploymentId: other })
    const absent = await createSession(target, body, { deploymentId: samplePath('{id}') })
    await expectLikeAbsent(foreign, absent)
  })

  it(`${req('SVC-002', 'AUTH-009')} answers another Project's Session and Turn exactly like absent ones`, async (ctx) => {
    const otherKey = role(ctx, target.world.keys.otherProject, 'a key of another Project')
    const created = await createSession(target, { input: [{ type: 'TEXT', text: 'hello' }] })
    expect(created.status, created.text).toBe(202)
    const { session_id, turn_id } = created.body as { session_id: string; turn_id: string }
    const absent = samplePath('{id}')
    const pairs = [
      [`/v1/sessions/${session_id}/turns/${turn_id}`, `/v1/sessions/${absent}/turns/${absent}`],
    ]
    // The Session detail's path is assumed (spec/openapi.yaml): checked on a mock only.
    if (target.control) pairs.push([`/v1/sessions/${session_id}`, `/v1/sessions/${absent}`])
    for (const [mine, none] of pairs) {
      const foreign = await target.api.get(mine!, { key: otherKey })
      const missing = await target.api.get(none!, { key: otherKey })
      await expectLikeAbsent(foreign, missing)
    }
  })

  it(`${req('AUTH-003', 'DEP-007')} lists only the one Deployment a key is limited to`, async (ctx) => {
    const key = role(ctx, target.world.keys.oneDeployment, 'key limited to one Deployment')
    const all = await target.api.get('/v1/deployments', { key: target.world.keys.full })
    const one = await target.api.get('/v1/deployments', { key })
    const allIds = (all.body as { items: { id: string }[] }).items.map((d) => d.id)
    const oneIds = (one.body as { items: { id: string }[] }).items.map((d) => d.id)
    expect(oneIds).toHaveLength(1)
    expect(allIds).toContain(oneIds[0])
  })

  it(`${req('AUTH-003', 'AUTH-009', 'DEP-009')} answers NOT_FOUND to a key limited to one Deployment on another Deployment of its Project`, async (ctx) => {
    const key = role(ctx, target.world.keys.oneDeployment, 'key limited to one Deployment')
    const [allowed] = (
      (await target.api.get('/v1/deployments', { key })).body as { items: { id: string }[] }
    ).items.map((d) => d.id)
    const others = [target.world.deployments.active, target.world.deployments.active2].filter(
      (id): id is string => id !== undefined && id !== allowed,
    )
    expect(others.length).toBeGreaterThan(0)
    expect((await target.api.get(`/v1/deployments/${allowed}`, { key })).status).toBe(200)
    const absent = await target.api.get(`/v1/deployments/${samplePath('{id}')}`, { key })
    for (const id of others) {
      const res = await target.api.get(`/v1/deployments/${id}`, { key })
      await expectLikeAbsent(res, absent)
    }
  })

  it(`${req('AUTH-008', 'ERR-030')} answers ACTING_FORBIDDEN to a delegated-access header`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    assumedRule(ctx, target, 'delegated-access header names (x-delegated-access)')
    const { headers } = delegatedAccessNames()
    expect(headers.length).toBeGreaterThan(0)
    for (const name of headers) {
      const res = await target.api.get('/v1/deployments', {
        key: target.world.keys.full,
        headers: { [name]: 'someone-else' },
      })
      expectError(res, 'ACTING_FORBIDDEN')
    }
  })

  it(`${req('AUTH-008', 'ERR-030')} answers ACTING_FORBIDDEN to a delegated-access query parameter`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    assumedRule(ctx, target, 'delegated-access parameter names (x-delegated-access)')
    const { query } = delegatedAccessNames()
    expect(query.length).toBeGreaterThan(0)
    for (const name of query) {
      const res = await target.api.get(`/v1/deployments/${target.world.deployments.active}`, {
        key: target.world.keys.full,
        query: { [name]: 'someone-else' },
      })
      expectError(res, 'ACTING_FORBIDDEN')
    }
  })

  it(`${req('AUTH-004', 'ERR-029')} answers INSUFFICIENT_SCOPE to an upload (files:write) with a read-only key`, async (ctx) => {
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    expect(namedScopes('uploadFile')).toContain('files:write')
    const refused = await retryRateLimited(target, () =>
      target.api.upload('/v1/files', helloFile, {
        key: readOnly,
        idem: idempotencyKeyOfBytes(40),
      }),
    )
    expectError(refused, 'INSUFFICIENT_SCOPE')
    // The same upload with a key holding files:write is accepted: scope was its only defect.
    const accepted = await retryRateLimited(target, () =>
      target.api.upload('/v1/files', helloFile, {
        key: target.world.keys.full,
        idem: idempotencyKeyOfBytes(40),
      }),
    )
    expect(accepted.status, accepted.text).toBe(201)
  })

  it(`${req('AUTH-004', 'ERR-029')} answers INSUFFICIENT_SCOPE to a Run request (workflows:run) with a read-only key`, async (ctx) => {
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    const workflow = role(ctx, target.world.workflows.available, 'available Workflow')
    expect(namedScopes('createRun')).toContain('workflows:run')
    const body = await runBody(workflow)
    const res = await retryRateLimited(target, () =>
      target.api.post(`/v1/workflows/${workflow}/runs`, body, {
        key: readOnly,
        idem: newIdempotencyKey('scope'),
      }),
    )
    expectError(res, 'INSUFFICIENT_SCOPE')
  })

  it(`${req('AUTH-004', 'ERR-029')} answers INSUFFICIENT_SCOPE to a Run cancel (runs:cancel) with a read-only key`, async (ctx) => {
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    const workflow = role(ctx, target.world.workflows.available, 'available Workflow')
    expect(namedScopes('cancelRun')).toContain('runs:cancel')
    const runId = await startRun(workflow)
    const res = await retryRateLimited(target, () =>
      target.api.post(
        `/v1/runs/${runId}/cancel`,
        {},
        { key: readOnly, idem: newIdempotencyKey('scope') },
      ),
    )
    expectError(res, 'INSUFFICIENT_SCOPE')
  })

  it(`${req('AUTH-004', 'ERR-029')} answers INSUFFICIENT_SCOPE to a Run delete (runs:delete) with a read-only key`, async (ctx) => {
    const readOnly = role(ctx, target.world.keys.readOnly, 'read-only key')
    const workflow = role(ctx, target.world.workflows.available, 'available Workflow')
    expect(namedScopes('deleteRun')).toContain('runs:delete')
    const runId = await startRun(workflow)
    const res = await retryRateLimited(target, () =>
      target.api.delete(
        `/v1/runs/${runId}`,
        {},
        { key: readOnly, idem: newIdempotencyKey('scope') },
      ),
    )
    expectError(res, 'INSUFFICIENT_SCOPE')
  })
})
