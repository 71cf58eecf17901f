/**
 * Webhook management (owner login token only, never an API key: Authentication 7, AUTH-011): register, list,
 * change and delete endpoints, rotate a secret, read the delivery history (FAILED is the dead-letter list) and
 * replay a delivery (Idempotency-Key, 10 per minute per Project; resends the notice only, WHM-012).
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { Context, Hono } from 'hono'
import type { Deps, Env } from '../deps.js'
import { eventExpired } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { DEFAULT_LIST_ITEMS, fittingCount, pageOverheadBytes } from '../domain/list-limits.js'
import { chargeRate } from '../middleware/rate-limit.js'
import { route } from '../http/route.js'
import type { Reply, Schema, TypedRequest } from '../http/typed.js'
import { getEvent } from '../store/events.js'
import {
  activeEndpoints,
  getDelivery,
  getEndpoint,
  insertEndpoint,
  listDeliveries,
  saveEndpoint,
  type DeliveryStatus,
  type EndpointRecord,
} from '../store/webhooks.js'
import { cancelWaitingDeliveries, deliveryView, enqueueDelivery } from '../webhooks/delivery.js'
import { ROTATION_OVERLAP_S } from '../webhooks/kit/verify.js'
import {
  bareHost,
  checkEndpointUrl,
  isPublicAddress,
  refusedHostName,
} from '../webhooks/network-rules.js'
import { SUBSCRIBABLE_EVENT_TYPES, subscribedTypes } from '../webhooks/notification.js'
import { decodeCursor, encodeCursor } from '../http/cursors.js'
import { iso } from '../util/iso.js'

/** WHM-001: endpoints per Project that are not deleted. */
export const MAX_ENDPOINTS = 10
/** Limits: at most 10 replays per minute per Project (WHM-010). */
export const REPLAYS_PER_MINUTE = 10
/** How long registration waits for DNS before leaving the address check to each attempt. */
const REGISTRATION_DNS_MS = 3000
const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['PENDING', 'SUCCEEDED', 'FAILED', 'CANCELED']

/**
 * An endpoint without its secret (the secret is shown only by registration and rotation). rotated_at is not
 * among the documented WebhookEndpoint fields (the schema allows more).
 */
function endpointView(e: EndpointRecord): Schema<'WebhookEndpoint'> {
  return {
    id: e.id,
    project_id: e.project_id,
    url: e.url,
    event_types: [...subscribedTypes(e.event_types)],
    status: e.status,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
    rotated_at: iso(e.rotated_at),
  }
}

const badUrl = (problem: string) =>
  new ApiError('INVALID_INPUT', {
    status: 422,
    message: 'The webhook address must be a public HTTPS address.',
    details: { field: 'url', reason: 'not a public HTTPS address', problem },
  })

/**
 * WHM-003 and the network rules at registration: the address itself, then (unless insecure) its DNS answer when
 * one comes within a few seconds. A name that does not resolve now is accepted: every attempt resolves again.
 */
async function checkAddress(deps: Deps, text: string): Promise<void> {
  const insecure = deps.settings.allowInsecureWebhooks
  const checked = checkEndpointUrl(text, insecure)
  if (!checked.ok) throw badUrl(checked.problem)
  const host = bareHost(checked.url)
  if (insecure || isIP(host) !== 0 || refusedHostName(host)) return
  const signal = AbortSignal.timeout(REGISTRATION_DNS_MS)
  const answer = await Promise.race([
    lookup(host, { all: true, verbatim: true }).catch(() => undefined),
    new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined))),
  ])
  if (answer && answer.some((a) => !isPublicAddress(a.address))) {
    throw badUrl('resolves to a non-public address')
  }
}

/** Only named event types (a typo would otherwise receive nothing, silently). */
function checkEventTypes(types: string[] | undefined): void {
  const unknown = (types ?? []).filter((t) => !SUBSCRIBABLE_EVENT_TYPES.includes(t))
  if (unknown.length > 0) {
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `Unknown event types: ${unknown.join(', ')}.`,
      details: { field: 'event_types', reason: 'unknown event type', unknown },
    })
  }
}

/** An endpoint of the owner's Project that is not deleted; else 404. */
function ownEndpoint(
  c: Context<Env>,
  req: TypedRequest<'updateWebhookEndpoint' | 'deleteWebhookEndpoint' | 'rotateWebhookSecret'>,
): EndpointRecord {
  const e = getEndpoint(c.var.deps.db, req.params.endpoint_id)
  if (!e || e.project_id !== req.ownerProjectId || e.status !== 'ACTIVE') {
    throw new ApiError('NOT_FOUND', { message: 'No such webhook endpoint.' })
  }
  return e
}

const sameTypes = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n')

function endpointLimitReached(): ApiError {
  return new ApiError('INVALID_INPUT', {
    status: 422,
    message: `A Project has at most ${MAX_ENDPOINTS} webhook endpoints that are not deleted.`,
    details: { reason: `webhook endpoint limit (${MAX_ENDPOINTS}) reached`, limit: MAX_ENDPOINTS },
  })
}

/** Registers the webhook management operations on the /api/runtime sub-app. */
export function webhookRoutes(app: Hono<Env>): void {
  // WHM-001, WHM-002, WHM-003, WHM-006
  route(app, 'createWebhookEndpoint', async (c, req) => {
    const deps = c.var.deps
    const { db, clock, ids } = deps
    const projectId = req.ownerProjectId
    const body = req.body
    checkEventTypes(body.event_types)
    if (activeEndpoints(db, projectId).length >= MAX_ENDPOINTS) throw endpointLimitReached()
    await checkAddress(deps, body.url)
    return db.tx((): Reply<'createWebhookEndpoint'> => {
      if (activeEndpoints(db, projectId).length >= MAX_ENDPOINTS) throw endpointLimitReached()
      const nowMs = clock.nowMs()
      const endpoint: EndpointRecord = {
        id: ids.uuid(),
        project_id: projectId,
        url: body.url,
        event_types: body.event_types ?? null,
        status: 'ACTIVE',
        secret: `whsec_${ids.secretToken(24)}`,
        previous_secret_expires_at: null,
        rotated_at: null,
        created_at: nowMs,
        updated_at: nowMs,
        deleted_at: null,
      }
      insertEndpoint(db, endpoint)
      return { status: 201, body: { ...endpointView(endpoint), secret: endpoint.secret } }
    })
  })

  route(app, 'listWebhookEndpoints', (c, req) => {
    const items = activeEndpoints(c.var.deps.db, req.ownerProjectId).map(endpointView)
    return { status: 200, body: { items } }
  })

  // WHM-011: a change of address or event types cancels waiting deliveries; nothing past goes to the new one.
  route(app, 'updateWebhookEndpoint', async (c, req) => {
    const deps = c.var.deps
    const body = req.body
    ownEndpoint(c, req)
    checkEventTypes(body.event_types)
    if (body.url !== undefined) await checkAddress(deps, body.url)
    return deps.db.tx((): Reply<'updateWebhookEndpoint'> => {
      const before = ownEndpoint(c, req)
      const after: EndpointRecord = {
        ...before,
        url: body.url ?? before.url,
        event_types: body.event_types ?? before.event_types,
        updated_at: deps.clock.nowMs(),
      }
      const changed =
        after.url !== before.url ||
        !sameTypes(subscribedTypes(after.event_types), subscribedTypes(before.event_types))
      if (changed) cancelWaitingDeliveries(deps, before.id)
      saveEndpoint(deps.db, after)
      return { status: 200, body: endpointView(after) }
    })
  })

  route(app, 'deleteWebhookEndpoint', (c, req) => {
    const deps = c.var.deps
    return deps.db.tx((): Reply<'deleteWebhookEndpoint'> => {
      const e = ownEndpoint(c, req)
      const nowMs = deps.clock.nowMs()
      const deleted: EndpointRecord = {
        ...e,
        status: 'DELETED',
        deleted_at: nowMs,
        updated_at: nowMs,
      }
      cancelWaitingDeliveries(deps, e.id)
      saveEndpoint(deps.db, deleted)
      return { status: 200, body: endpointView(deleted) }
    })
  })

  // WHM-007: the new secret signs every later attempt at once; receivers keep the old one for 20 s + 300 s.
  route(app, 'rotateWebhookSecret', (c, req) => {
    const deps = c.var.deps
    return deps.db.tx((): Reply<'rotateWebhookSecret'> => {
      const e = ownEndpoint(c, req)
      const nowMs = deps.clock.nowMs()
      const rotated: EndpointRecord = {
        ...e,
        secret: `whsec_${deps.ids.secretToken(24)}`,
        rotated_at: nowMs,
        previous_secret_expires_at: nowMs + ROTATION_OVERLAP_S * 1000,
        updated_at: nowMs,
      }
      saveEndpoint(deps.db, rotated)
      return {
        status: 200,
        body: {
          ...endpointView(rotated),
          secret: rotated.secret,
          previous_secret_expires_at: iso(rotated.previous_secret_expires_at),
        },
      }
    })
  })

  // WHM-008: newest first; FAILED deliveries are the dead-letter list (status=FAILED).
  route(app, 'listWebhookDeliveries', (c, req) => {
    const deps = c.var.deps
    const projectId = req.ownerProjectId
    const query = req.query
    if (query.status !== undefined && !DELIVERY_STATUSES.some((s) => s === query.status)) {
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message: `status must be one of ${DELIVERY_STATUSES.join(', ')}.`,
        details: { field: 'status', reason: 'unknown delivery status' },
      })
    }
    const limit = query.limit ?? DEFAULT_LIST_ITEMS
    const beforeSeq =
      query.after === undefined ? Number.MAX_SAFE_INTEGER : decodeCursor(query.after, projectId)
    const rows = listDeliveries(deps.db, projectId, {
      beforeSeq,
      status: query.status,
      limit: limit + 1,
    })
    // SIZE-014: at most `limit` items, ending before the response passes 256 KiB.
    const views = rows.slice(0, limit).map((d) => deliveryView(deps, d))
    const n = fittingCount(views, pageOverheadBytes({ items: [], next_cursor: null }))
    const last = rows[n - 1]
    return {
      status: 200,
      body: {
        items: views.slice(0, n),
        next_cursor: rows.length > n && last ? encodeCursor(projectId, last.seq) : null,
      },
    }
  })

  // WHM-009 (Idempotency-Key, by route()), WHM-010, WHM-012, WHN-005: same event, same bytes, new attempts.
  route(app, 'replayWebhookDelivery', (c, req) => {
    const deps = c.var.deps
    const { db, clock } = deps
    const projectId = req.ownerProjectId
    const original = getDelivery(db, req.params.delivery_id)
    if (!original || original.project_id !== projectId) {
      throw new ApiError('NOT_FOUND', { message: 'No such webhook delivery.' })
    }
    const endpoint = getEndpoint(db, original.endpoint_id)
    if (!endpoint || endpoint.status !== 'ACTIVE') {
      throw new ApiError('NOT_FOUND', { message: 'The endpoint of this delivery was deleted.' })
    }
    const nowMs = clock.nowMs()
    const event = getEvent(deps.db, original.event_id)
    // EVT-003: events (and so replays) are kept at most 30 days.
    if (!event || eventExpired(event.created_at, nowMs)) {
      throw new ApiError('NOT_FOUND', { message: 'The event of this delivery is past retention.' })
    }
    // WHM-010: at most 10 replays per minute per Project.
    if (deps.settings.rateLimits)
      chargeRate(deps, [{ id: `webhook-replay:${projectId}`, limit: REPLAYS_PER_MINUTE }], () => ({
        message: `At most ${REPLAYS_PER_MINUTE} webhook replays per minute per Project.`,
        details: { limit: REPLAYS_PER_MINUTE, scope: 'project' },
      }))
    const replay = enqueueDelivery(deps, {
      project_id: projectId,
      endpoint_id: endpoint.id,
      event_id: original.event_id,
      event_type: original.event_type,
      body: original.body,
      replay_of: original.id,
      nowMs,
    })
    return { status: 202, body: deliveryView(deps, replay) }
  })
}
