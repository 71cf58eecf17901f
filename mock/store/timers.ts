/**
 * The timers table: durable timer rows in total order (due_at, seq). Every query is an index lookup.
 */
import type { Db } from './db.js'

export type TimerRow = {
  id: string
  due_at: number
  seq: number
  kind: string
  payload_json: string
  subject: string | null
}

/**
 * Inserts a timer with its seq. The seq comes from a counter that only grows (never reused, even after the
 * timer with the largest seq fired), so equal due times fire in scheduling order: the scheduler holds it in
 * memory (lastTimerSeq once, saveTimerSeq now and then), not one statement per timer.
 */
export function insertTimer(db: Db, t: TimerRow): void {
  db.stmt(
    'INSERT INTO timers (id, due_at, seq, kind, payload_json, subject) VALUES (@id, @due_at, @seq, @kind, @payload_json, @subject)',
  ).run(t)
}

/**
 * Inserts a timer under a seq reserved earlier (Scheduler.reserveSeq), unless a timer already holds that key:
 * a reserved key names one timer only, so scheduling it again is a no-op. True when it was inserted.
 */
export function insertReservedTimer(db: Db, t: TimerRow): boolean {
  return (
    db
      .stmt(
        'INSERT OR IGNORE INTO timers (id, due_at, seq, kind, payload_json, subject) VALUES (@id, @due_at, @seq, @kind, @payload_json, @subject)',
      )
      .run(t).changes > 0
  )
}

/**
 * The last timer seq handed out on this store, as far as it shows: the saved counter, the largest seq of a
 * pending timer, or the largest seq an open execution holds for its queue timeout (reserved, its timer
 * perhaps not written yet: execution/queue-timeouts.ts), whichever is largest (a counter not saved since:
 * every seq above it is unused, or its timer fired). Scans the timers and executions tables: once per
 * process or world reset.
 */
export function lastTimerSeq(db: Db): number {
  return (
    db
      .stmt(
        `SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'timer_seq'), 0),
                    COALESCE((SELECT MAX(seq) FROM timers), 0),
                    COALESCE((SELECT MAX(queue_timer_seq) FROM executions WHERE terminal = 0), 0)) AS last`,
      )
      .get() as { last: number }
  ).last
}

/** Saves the timer seq counter (the last seq handed out); a saved counter never goes down. */
export function saveTimerSeq(db: Db, last: number): void {
  db.stmt(
    `INSERT INTO meta (key, value) VALUES ('timer_seq', @last)
     ON CONFLICT (key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), @last)`,
  ).run({ last })
}

/**
 * A timer's id: its key, "<due_at>.<seq>" (schema 270). The key is unique and never reused (seq only grows), so
 * no index of a separate id is written per timer, and a timer is found by its id through the table's key.
 */
export const timerIdOf = (dueAt: number, seq: number): string => `${dueAt}.${seq}`

const TIMER_ID = /^(-?\d{1,15})\.(\d{1,15})$/

/** The key a timer id names; undefined for a string that is not a timer id. */
function timerKeyOf(id: string): { due_at: number; seq: number } | undefined {
  const m = TIMER_ID.exec(id)
  return m ? { due_at: Number(m[1]), seq: Number(m[2]) } : undefined
}

/** Deletes one timer; true when it existed. */
export function deleteTimer(db: Db, id: string): boolean {
  const key = timerKeyOf(id)
  return (
    key !== undefined &&
    db.stmt('DELETE FROM timers WHERE due_at = ? AND seq = ?').run(key.due_at, key.seq).changes > 0
  )
}

/** Deletes the timers of a subject (optionally of one kind); returns how many. */
export function deleteTimersOf(db: Db, subject: string, kind?: string): number {
  return kind === undefined
    ? db.stmt('DELETE FROM timers WHERE subject = ?').run(subject).changes
    : db.stmt('DELETE FROM timers WHERE subject = ? AND kind = ?').run(subject, kind).changes
}

/** The first pending timer of a subject in (due_at, seq) order, if any (read through the subject index). */
export function firstTimerOf(db: Db, subject: string): { due_at: number; seq: number } | undefined {
  return db
    .cached('SELECT due_at, seq FROM timers WHERE subject = ? ORDER BY due_at, seq LIMIT 1')
    .get(subject) as { due_at: number; seq: number } | undefined
}

/** The first timer in (due_at, seq) order, if any. */
export function firstTimer(db: Db): TimerRow | undefined {
  return db.stmt('SELECT * FROM timers ORDER BY due_at, seq LIMIT 1').get() as TimerRow | undefined
}

/** The first timer due at or before targetMs, in (due_at, seq) order. */
export function firstDueTimer(db: Db, targetMs: number): TimerRow | undefined {
  return db
    .stmt('SELECT * FROM timers WHERE due_at <= ? ORDER BY due_at, seq LIMIT 1')
    .get(targetMs) as TimerRow | undefined
}

/** One timer by id. */
export function getTimer(db: Db, id: string): TimerRow | undefined {
  const key = timerKeyOf(id)
  return key === undefined
    ? undefined
    : (db.stmt('SELECT * FROM timers WHERE due_at = ? AND seq = ?').get(key.due_at, key.seq) as
        TimerRow | undefined)
}

/** How many timers are pending. */
export function countTimers(db: Db): number {
  return (db.stmt('SELECT COUNT(*) AS n FROM timers').get() as { n: number }).n
}
