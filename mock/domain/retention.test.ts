import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEDUP_RETENTION_MS as KIT_DEDUP_RETENTION_MS } from '../webhooks/kit/index.js'
import {
  ARTIFACT_RETENTION_MS,
  BOUND_FILE_RETENTION_MS,
  DAY_MS,
  DEDUP_RETENTION_MS,
  DEFAULT_RUN_RETENTION_DAYS,
  EVENT_RETENTION_MS,
  HOUR_MS,
  IDEMPOTENCY_RETENTION_MS,
  PRE_UPLOAD_RETENTION_MS,
  SESSION_FILE_RETENTION_MS,
  SESSION_IDLE_MS,
  artifactExpiresAt,
  boundFileExpiresAt,
  eventExpired,
  eventsVisibleSince,
  idempotencyExpiresAt,
  isExpired,
  receiptHolds,
  runContentExpired,
  runExpiresAt,
  runFileExpiresAt,
  sessionExpired,
  sessionExpiresAt,
  uploadedFileExpiresAt,
} from './retention.js'

const T0 = Date.parse('2026-10-01T00:00:00Z')
const instant = fc.integer({ min: T0, max: T0 + 400 * DAY_MS })

describe('retention', () => {
  it('[RET-014][RET-013] content is gone exactly at its expiry instant, not a millisecond before', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -DAY_MS, max: DAY_MS }), (at, offset) => {
        expect(isExpired(at, at + offset)).toBe(offset >= 0)
      }),
    )
  })

  it('[RET-001][RET-002] a receipt answers 24 hours by time, and longer while its execution is open', () => {
    expect(IDEMPOTENCY_RETENTION_MS).toBe(24 * HOUR_MS)
    expect(idempotencyExpiresAt(T0)).toBe(T0 + 24 * 60 * 60 * 1000)
    const exp = idempotencyExpiresAt(T0)
    expect(receiptHolds(exp, exp - 1, false)).toBe(true)
    expect(receiptHolds(exp, exp, false)).toBe(false)
    expect(receiptHolds(exp, exp + 30 * DAY_MS, true)).toBe(true)
  })

  it('[RET-003] a Session expires 30 days after its last activity', () => {
    expect(SESSION_IDLE_MS).toBe(30 * 24 * 60 * 60 * 1000)
    fc.assert(
      fc.property(instant, fc.integer({ min: 0, max: 60 * DAY_MS }), (last, idle) => {
        expect(sessionExpiresAt(last)).toBe(last + 30 * DAY_MS)
        expect(sessionExpired(last, last + idle)).toBe(idle >= 30 * DAY_MS)
      }),
    )
  })

  it('[RET-005][RET-007] an upload is kept 24 hours ahead of use, 30 days in a Session or from first use', () => {
    expect(PRE_UPLOAD_RETENTION_MS).toBe(24 * HOUR_MS)
    expect(SESSION_FILE_RETENTION_MS).toBe(30 * DAY_MS)
    expect(BOUND_FILE_RETENTION_MS).toBe(30 * DAY_MS)
    expect(uploadedFileExpiresAt(T0, false)).toBe(T0 + 24 * HOUR_MS)
    expect(uploadedFileExpiresAt(T0, true)).toBe(T0 + 30 * DAY_MS)
    // Used 23 hours after upload: 30 days from that moment, not from the upload.
    expect(boundFileExpiresAt(T0 + 23 * HOUR_MS)).toBe(T0 + 23 * HOUR_MS + 30 * DAY_MS)
  })

  it('[RET-010][RET-012] Run content is kept retention_days after the end (30 by default); none while running', () => {
    expect(DEFAULT_RUN_RETENTION_DAYS).toBe(30)
    expect(runExpiresAt(null, 30)).toBeNull()
    expect(runContentExpired(null, 1, T0 + 400 * DAY_MS)).toBe(false)
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 30 }), instant, (end, days, now) => {
        expect(runExpiresAt(end, days)).toBe(end + days * DAY_MS)
        expect(runContentExpired(end, days, now)).toBe(now >= end + days * DAY_MS)
      }),
    )
  })

  it('[RET-009] a Run file outlives the Run content of any Run that ends by its deadline', () => {
    fc.assert(
      fc.property(
        instant,
        fc.nat(43_200_000),
        fc.integer({ min: 1, max: 30 }),
        (end, early, days) => {
          const deadline = end + early
          expect(runFileExpiresAt(deadline, days)).toBe(deadline + days * DAY_MS)
          expect(runFileExpiresAt(deadline, days)).toBeGreaterThanOrEqual(runExpiresAt(end, days)!)
        },
      ),
    )
    expect(artifactExpiresAt(T0)).toBe(T0 + ARTIFACT_RETENTION_MS)
    expect(ARTIFACT_RETENTION_MS).toBe(30 * DAY_MS)
  })

  it('[EVT-003][SSE-017] an event is kept 30 days; the visible-events bound agrees with eventExpired', () => {
    expect(EVENT_RETENTION_MS).toBe(30 * DAY_MS)
    expect(eventExpired(T0, T0 + 30 * DAY_MS - 1)).toBe(false)
    expect(eventExpired(T0, T0 + 30 * DAY_MS)).toBe(true)
    fc.assert(
      fc.property(instant, instant, (created, now) => {
        expect(created > eventsVisibleSince(now)).toBe(!eventExpired(created, now))
      }),
    )
  })

  it('[RET-011] webhook dedup ids are kept at most 30 days (the receiver kit constant)', () => {
    expect(DEDUP_RETENTION_MS).toBe(KIT_DEDUP_RETENTION_MS)
    expect(DEDUP_RETENTION_MS).toBeLessThanOrEqual(30 * DAY_MS)
  })
})
