/**
 * Webhook management (owner login token, not part of /v1) and Webhook endpoint (management) on a target
 * started WITHOUT --allow-insecure-webhooks: the document's network rules apply at registration.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { documentedOperations, samplePath } from '../../support/documented.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { assumedRule, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const base = () => `/api/runtime/projects/${target.world.projectId}`
/** A public HTTPS address under the documentation domain (never receives anything in these tests). */
const publicUrl = () => `https://hooks.example.com/conformance/${randomUUID()}`

type Endpoint = { id: string; url: string; event_types: string[]; status: string; secret?: string }

async function register(owner: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return target.api.post(`${base()}/webhooks`, body, { key: owner })
}

/** A refused registration: a 4xx error envelope; on the mock the assumed INVALID_INPUT (422). */
function expectRefused(res: ApiResponse): void {
  expect(res.status, res.text).toBeGreaterThanOrEqual(400)
  expect(res.status, res.text).toBeLessThan(500)
  if (target.control) expectError(res, 'INVALID_INPUT', { status: 422 })
}

describe('webhook management', () => {
  const managementOps = documentedOperations().filter((o) => o.auth === 'ownerToken')

  it.each(managementOps.map((o) => [`${o.method} ${o.template}`, o] as const))(
    `${req('AUTH-011')} refuses an API key on the management path %s`,
    async (_name, op) => {
      const path = samplePath(op.template, { project_id: target.world.projectId })
      const res = await target.api.send(
        op.method,
        path,
        op.body === 'json' ? { url: publicUrl() } : undefined,
        { key: target.world.keys.full, idem: op.idempotent ? randomUUID() : undefined },
      )
      expect(res.status, res.text).toBeGreaterThanOrEqual(401)
      expect(res.status, res.text).toBeLessThanOrEqual(404)
      // The code is not shown by the document; the mock answers INVALID_API_KEY (x-assumed).
      if (target.control) expectError(res, 'INVALID_API_KEY')
    },
  )

  it(`${req('WHM-006', 'WHM-002')} registers an endpoint with the owner token and returns its secret once`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const url = publicUrl()
    const res = await register(owner, { url, event_types: ['turn.completed', 'run.completed'] })
    expect(res.status, res.text).toBe(201)
    const created = res.body as Endpoint
    expect(created).toMatchObject({ url, event_types: ['turn.completed', 'run.completed'] })
    expect(typeof created.secret).toBe('string')
    expect(created.secret!.length).toBeGreaterThan(0)
    assumedRule(ctx, target, 'listing endpoints (listWebhookEndpoints is an assumed path)')
    const list = await target.api.get(`${base()}/webhooks`, { key: owner })
    expect(list.status).toBe(200)
    expect(list.text).not.toContain(created.secret!)
    expect((list.body as { items: Endpoint[] }).items.map((e) => e.id)).toContain(created.id)
  })

  it(`${req('WHM-004')} shows the default event set of an endpoint registered without event_types`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    assumedRule(ctx, target, 'the endpoint record lists its effective event types')
    const res = await register(owner, { url: publicUrl() })
    expect(res.status, res.text).toBe(201)
    const types = (res.body as Endpoint).event_types
    for (const t of [
      'turn.completed',
      'turn.failed',
      'run.completed',
      'run.failed',
      'run.action_required',
    ])
      expect(types).toContain(t)
    expect(types).not.toContain('run.step.completed')
  })

  it(`${req('WHM-003')} refuses an address that is not HTTPS`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    for (const url of [
      'http://hooks.example.com/ai',
      'ftp://hooks.example.com/ai',
      'hooks.example.com/ai',
      'http://127.0.0.1:8080/hook',
    ]) {
      expectRefused(await register(owner, { url }))
    }
  })

  it(`${req('WHM-003', 'WHN-026')} refuses loopback, private, link-local, metadata and internal names at registration`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    // The document refuses these addresses for sending; refusing them at registration is the mock's choice.
    assumedRule(ctx, target, 'the network rules are also checked at registration')
    for (const url of [
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://[::1]/hook',
      'https://10.0.0.8/hook',
      'https://192.168.1.20/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fe80::1]/hook',
      'https://printer.local/hook',
      'https://metadata.google.internal/hook',
      'https://[::ffff:127.0.0.1]/hook',
    ]) {
      const res = await register(owner, { url })
      expectRefused(res)
      expect(res.status, url).not.toBe(201)
    }
  })

  it(`${req('WHM-001')} refuses an 11th endpoint that is not deleted`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const list = target.control
      ? ((await target.api.get(`${base()}/webhooks`, { key: owner })).body as { items: Endpoint[] })
      : { items: [] }
    for (let i = list.items.length; i < 10; i++) {
      const res = await register(owner, { url: publicUrl() })
      expect(res.status, res.text).toBe(201)
    }
    const over = await register(owner, { url: publicUrl() })
    expectRefused(over)
    assumedRule(ctx, target, 'deleting an endpoint (deleteWebhookEndpoint is an assumed path)')
    const first = (
      (await target.api.get(`${base()}/webhooks`, { key: owner })).body as {
        items: Endpoint[]
      }
    ).items[0]!
    const deleted = await target.api.delete(`${base()}/webhooks/${first.id}`, undefined, {
      key: owner,
    })
    expect(deleted.status, deleted.text).toBe(200)
    expect((await register(owner, { url: publicUrl() })).status).toBe(201)
  })

  it(`${req('WHM-007')} rotates the secret: a new secret, shown once`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const created = (await register(owner, { url: publicUrl() })).body as Endpoint
    const res = await target.api.post(`${base()}/webhooks/${created.id}/rotate-secret`, undefined, {
      key: owner,
    })
    expect(res.status, res.text).toBe(200)
    const rotated = res.body as Endpoint
    expect(rotated.id).toBe(created.id)
    expect(typeof rotated.secret).toBe('string')
    expect(rotated.secret).not.toBe(created.secret)
  })

  it(`${req('WHM-008')} returns the Project's delivery history`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const res = await target.api.get(`${base()}/webhook-deliveries`, { key: owner })
    expect(res.status, res.text).toBe(200)
    expect(Array.isArray((res.body as { items: unknown[] }).items)).toBe(true)
  })

  it(`${req('WHM-009')} requires an Idempotency-Key to replay a delivery`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const res = await target.api.post(
      `${base()}/webhook-deliveries/${randomUUID()}/replay`,
      undefined,
      { key: owner },
    )
    expectError(res, 'INVALID_IDEMPOTENCY_KEY')
  })

  it(`${req('AUTH-011')} refuses the owner token of another Project like an absent Project`, async (ctx) => {
    const owner = role(ctx, target.world.ownerToken, 'owner login token')
    const res = await target.api.get(`/api/runtime/projects/${randomUUID()}/webhooks`, {
      key: owner,
    })
    expect([403, 404]).toContain(res.status)
  })
})
