/**
 * Read-only queries of the inspector (mock/inspector/): the recent Sessions, executions and deliveries, the
 * call-rate windows, and everything that belongs to one execution (its events, ledger entries, actions,
 * pending timers, webhook deliveries). Never on a request's hot path: every list is bounded by a LIMIT.
 */
import type { Db } from './db.js'
import { executionRows } from './row-ids.js'
import type { ExecutionRow, SessionRecord } from './executions.js'
import type { TimerRow as StoredTimerRow } from './timers.js'
import type { ActionRow as StoredActionRow } from './actions.js'
import type { EventRow as StoredEventRow } from './events.js'
import type { DeliveryRecord, EndpointRow as StoredEndpointRow } from './webhooks.js'

export type { ExecutionRow }

export type RateWindowRow = { scope: string; start_ms: number; count: number }
export type EventRow = Pick<
  StoredEventRow,
  | 'event_id'
  | 'aggregate_kind'
  | 'aggregate_id'
  | 'sequence'
  | 'type'
  | 'created_at'
  | 'data_json'
  | 'status'
>
export type LedgerRow = { category: string; su: number; settled_at: number }
export type ActionRow = Pick<
  StoredActionRow,
  'id' | 'kind' | 'status' | 'created_at' | 'expires_at' | 'resolved_at'
>
export type EndpointRow = Pick<
  StoredEndpointRow,
  | 'id'
  | 'url'
  | 'event_types_json'
  | 'status'
  | 'secret'
  | 'rotated_at'
  | 'created_at'
  | 'deleted_at'
>
export type TimerRow = Omit<StoredTimerRow, 'subject'>

type SessionRow = Omit<SessionRecord, 'metadata' | 'seq'>

export const rateWindows = (db: Db, limit: number): RateWindowRow[] =>
  db
    .stmt('SELECT scope, start_ms, count FROM rate_windows ORDER BY scope LIMIT CAST(? AS INTEGER)')
    .all(limit) as RateWindowRow[]

export const recentSessions = (db: Db, limit: number): SessionRow[] =>
  db
    .stmt(
      `SELECT id, project_id, deployment_id, status, deleted_at, created_at, last_activity_at, workflow_run_id
       FROM sessions ORDER BY created_at DESC, rowid DESC LIMIT CAST(? AS INTEGER)`,
    )
    .all(limit) as SessionRow[]

export const recentExecutions = (db: Db, limit: number): ExecutionRow[] =>
  db
    .stmt('SELECT * FROM executions ORDER BY seq DESC LIMIT CAST(? AS INTEGER)')
    .all(limit) as ExecutionRow[]

export const executionRow = (db: Db, id: string): ExecutionRow | undefined => {
  const seq = executionRows(db).seqOf(id)
  return seq === undefined
    ? undefined
    : (db.stmt('SELECT * FROM executions WHERE seq = ? AND id = ?').get(seq, id) as
        ExecutionRow | undefined)
}

/** The public events of one Turn or Run, in their order. */
export const eventsOfExecution = (db: Db, id: string, limit: number): EventRow[] =>
  db
    .stmt(
      `SELECT event_id, aggregate_kind, aggregate_id, sequence, type, created_at, data_json, status FROM events
       WHERE turn_id = @id OR (run_id = @id AND aggregate_kind = 'RUN') ORDER BY created_at, sequence LIMIT CAST(@limit AS INTEGER)`,
    )
    .all({ id, limit }) as EventRow[]

export const ledgerOfExecution = (db: Db, id: string): LedgerRow[] =>
  db
    .stmt(
      'SELECT category, su, settled_at FROM usage_ledger WHERE execution_id = ? ORDER BY seq LIMIT 100',
    )
    .all(id) as LedgerRow[]

export const actionsOfExecution = (db: Db, id: string): ActionRow[] =>
  db
    .stmt(
      'SELECT id, kind, status, created_at, expires_at, resolved_at FROM actions WHERE execution_id = ? ORDER BY created_at LIMIT 100',
    )
    .all(id) as ActionRow[]

/** The timers still pending for a subject (an execution's id), in firing order. */
export const timersOfSubject = (db: Db, subject: string, limit: number): TimerRow[] =>
  db
    .stmt(
      'SELECT id, due_at, seq, kind, payload_json FROM timers WHERE subject = ? ORDER BY due_at, seq LIMIT CAST(? AS INTEGER)',
    )
    .all(subject, limit) as TimerRow[]

/** Every endpoint of a Project, deleted ones too, oldest first. */
export const endpointsOfProject = (db: Db, projectId: string): EndpointRow[] =>
  db
    .stmt(
      `SELECT id, url, event_types_json, status, secret, rotated_at, created_at, deleted_at
       FROM webhook_endpoints WHERE project_id = ? ORDER BY seq LIMIT 100`,
    )
    .all(projectId) as EndpointRow[]

export const recentDeliveries = (db: Db, limit: number): DeliveryRecord[] =>
  db
    .stmt('SELECT * FROM webhook_deliveries ORDER BY seq DESC LIMIT CAST(? AS INTEGER)')
    .all(limit) as DeliveryRecord[]

/** The deliveries of the events of one Turn or Run. */
export const deliveriesOfExecution = (db: Db, id: string, limit: number): DeliveryRecord[] =>
  db
    .stmt(
      `SELECT * FROM webhook_deliveries WHERE event_id IN (SELECT event_id FROM events
         WHERE turn_id = @id OR (run_id = @id AND aggregate_kind = 'RUN')) ORDER BY seq LIMIT CAST(@limit AS INTEGER)`,
    )
    .all({ id, limit }) as DeliveryRecord[]
