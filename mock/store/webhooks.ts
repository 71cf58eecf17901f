/**
 * SQL of the webhook tables (mock/store/schema/150-webhooks.sql): endpoints, deliveries and attempt outcomes.
 * Row <-> record mapping only; the rules live in mock/webhooks/delivery.ts and mock/routes/webhooks.ts.
 */
import type { Db } from './db.js'

export type EndpointStatus = 'ACTIVE' | 'DELETED'

export type EndpointRecord = {
  id: string
  project_id: string
  url: string
  /** null: the default set (Webhook endpoint (management)). */
  event_types: string[] | null
  status: EndpointStatus
  secret: string
  previous_secret_expires_at: number | null
  rotated_at: number | null
  created_at: number
  updated_at: number
  deleted_at: number | null
}

/** A webhook_endpoints row as stored (event types unparsed). */
export type EndpointRow = Omit<EndpointRecord, 'event_types'> & {
  seq: number
  event_types_json: string | null
}

const toEndpoint = ({ event_types_json, seq: _seq, ...r }: EndpointRow): EndpointRecord => ({
  ...r,
  event_types: event_types_json === null ? null : (JSON.parse(event_types_json) as string[]),
})

export function insertEndpoint(db: Db, e: EndpointRecord): void {
  const { next } = db
    .stmt('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM webhook_endpoints')
    .get() as { next: number }
  db.stmt(
    `INSERT INTO webhook_endpoints (id, seq, project_id, url, event_types_json, status, secret,
       previous_secret_expires_at, rotated_at, created_at, updated_at, deleted_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    e.id,
    next,
    e.project_id,
    e.url,
    e.event_types === null ? null : JSON.stringify(e.event_types),
    e.status,
    e.secret,
    e.previous_secret_expires_at,
    e.rotated_at,
    e.created_at,
    e.updated_at,
    e.deleted_at,
  )
}

export function saveEndpoint(db: Db, e: EndpointRecord): void {
  db.stmt(
    `UPDATE webhook_endpoints SET url = ?, event_types_json = ?, status = ?, secret = ?,
       previous_secret_expires_at = ?, rotated_at = ?, updated_at = ?, deleted_at = ? WHERE id = ?`,
  ).run(
    e.url,
    e.event_types === null ? null : JSON.stringify(e.event_types),
    e.status,
    e.secret,
    e.previous_secret_expires_at,
    e.rotated_at,
    e.updated_at,
    e.deleted_at,
    e.id,
  )
}

export function getEndpoint(db: Db, id: string): EndpointRecord | undefined {
  const row = db.stmt('SELECT * FROM webhook_endpoints WHERE id = ?').get(id) as
    EndpointRow | undefined
  return row && toEndpoint(row)
}

/** What an attempt needs of its endpoint (status, address, current secret): no JSON to parse, no record to map. */
export function endpointForSend(
  db: Db,
  id: string,
): Pick<EndpointRecord, 'status' | 'url' | 'secret'> | undefined {
  return db.stmt('SELECT status, url, secret FROM webhook_endpoints WHERE id = ?').get(id) as
    Pick<EndpointRecord, 'status' | 'url' | 'secret'> | undefined
}

/** The endpoints of a Project that are not deleted, in registration order. */
export function activeEndpoints(db: Db, projectId: string): EndpointRecord[] {
  return (
    db
      .stmt(
        "SELECT * FROM webhook_endpoints WHERE project_id = ? AND status = 'ACTIVE' ORDER BY seq",
      )
      .all(projectId) as EndpointRow[]
  ).map(toEndpoint)
}

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'CANCELED'

export type DeliveryRecord = {
  id: string
  seq: number
  project_id: string
  endpoint_id: string
  event_id: string
  event_type: string
  body: string
  status: DeliveryStatus
  attempts: number
  first_attempt_at: number | null
  last_attempt_at: number | null
  next_attempt_at: number | null
  next_timer_id: string | null
  last_http_status: number | null
  last_error_code: string | null
  replay_of: string | null
  created_at: number
}

export function insertDelivery(db: Db, d: Omit<DeliveryRecord, 'seq'>): DeliveryRecord {
  const { next } = db
    .stmt('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM webhook_deliveries')
    .get() as { next: number }
  const row = Object.assign({}, d, { seq: next })
  db.stmt(
    `INSERT INTO webhook_deliveries (id, seq, project_id, endpoint_id, event_id, event_type, body, status,
       attempts, first_attempt_at, last_attempt_at, next_attempt_at, next_timer_id, last_http_status,
       last_error_code, replay_of, created_at)
     VALUES (@id, @seq, @project_id, @endpoint_id, @event_id, @event_type, @body, @status, @attempts,
       @first_attempt_at, @last_attempt_at, @next_attempt_at, @next_timer_id, @last_http_status,
       @last_error_code, @replay_of, @created_at)`,
  ).run(row)
  return row
}

export function saveDelivery(db: Db, d: DeliveryRecord): void {
  db.stmt(
    `UPDATE webhook_deliveries SET status = @status, attempts = @attempts,
       first_attempt_at = @first_attempt_at, last_attempt_at = @last_attempt_at,
       next_attempt_at = @next_attempt_at, next_timer_id = @next_timer_id,
       last_http_status = @last_http_status, last_error_code = @last_error_code WHERE id = @id`,
  ).run(d)
}

/**
 * An attempt's outcome on its delivery in one statement, when the delivery still stands where that attempt
 * left it: PENDING, `attempts` unchanged and its next timer the one the attempt scheduled. The last status and
 * error are set; when the attempt was the last or succeeded (`final_status` given) the delivery takes that
 * status, with no next attempt. False when no row matched (gone, canceled, a newer attempt or another timer):
 * the caller then reads the delivery and decides.
 */
export function settleAttempt(
  db: Db,
  a: {
    id: string
    attempt: number
    timer_id: string
    http_status: number | null
    error_code: string | null
    final_status: 'SUCCEEDED' | 'FAILED' | null
  },
): boolean {
  return (
    db
      .stmt(
        `UPDATE webhook_deliveries SET last_http_status = @http_status, last_error_code = @error_code,
           status = COALESCE(@final_status, status),
           next_attempt_at = CASE WHEN @final_status IS NULL THEN next_attempt_at END,
           next_timer_id = CASE WHEN @final_status IS NULL THEN next_timer_id END
         WHERE id = @id AND attempts = @attempt AND status = 'PENDING' AND next_timer_id = @timer_id`,
      )
      .run(a).changes === 1
  )
}

export function getDelivery(db: Db, id: string): DeliveryRecord | undefined {
  return db.stmt('SELECT * FROM webhook_deliveries WHERE id = ?').get(id) as
    DeliveryRecord | undefined
}

/** The deliveries of an endpoint still waiting to be sent. */
export function waitingDeliveries(db: Db, endpointId: string): DeliveryRecord[] {
  return db
    .stmt("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'PENDING'")
    .all(endpointId) as DeliveryRecord[]
}

/** A page of a Project's deliveries, newest first: those with seq below `beforeSeq`, optionally one status. */
export function listDeliveries(
  db: Db,
  projectId: string,
  opts: { beforeSeq: number; status?: string; limit: number },
): DeliveryRecord[] {
  return (
    opts.status === undefined
      ? db
          .stmt(
            'SELECT * FROM webhook_deliveries WHERE project_id = ? AND seq < ? ORDER BY seq DESC LIMIT CAST(? AS INTEGER)',
          )
          .all(projectId, opts.beforeSeq, opts.limit)
      : db
          .stmt(
            'SELECT * FROM webhook_deliveries WHERE project_id = ? AND seq < ? AND status = ? ORDER BY seq DESC LIMIT CAST(? AS INTEGER)',
          )
          .all(projectId, opts.beforeSeq, opts.status, opts.limit)
  ) as DeliveryRecord[]
}

export type AttemptRecord = {
  delivery_id: string
  attempt: number
  attempted_at: number
  http_status: number | null
  error_code: string | null
}

export function insertAttempt(db: Db, a: AttemptRecord): void {
  db.stmt(
    `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, http_status, error_code)
     VALUES (@delivery_id, @attempt, @attempted_at, @http_status, @error_code)
     ON CONFLICT (delivery_id, attempt) DO UPDATE SET http_status = excluded.http_status,
       error_code = excluded.error_code`,
  ).run(a)
}

export function attemptsOf(db: Db, deliveryId: string): AttemptRecord[] {
  return db
    .stmt('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt')
    .all(deliveryId) as AttemptRecord[]
}
