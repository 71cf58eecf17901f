/**
 * Every retention period of the mock and every expiry computed from one, in one place (Limits > Retention):
 *
 * | Target (document's Retention table)     | Here                                                      |
 * |-----------------------------------------|-----------------------------------------------------------|
 * | Idempotency receipt: >= 24 h, and until | IDEMPOTENCY_RETENTION_MS, idempotencyExpiresAt,           |
 * |   the Turn ends                         |   receiptHolds                                            |
 * | Session: 30 days idle                   | SESSION_IDLE_MS, sessionExpiresAt, sessionExpired         |
 * | File uploaded ahead: 24 hours           | PRE_UPLOAD_RETENTION_MS, uploadedFileExpiresAt            |
 * | Session files: 30 days from upload, or  | SESSION_FILE_RETENTION_MS, uploadedFileExpiresAt,         |
 * |   from first use as Turn input          |   BOUND_FILE_RETENTION_MS, boundFileExpiresAt,            |
 * |                                         |   boundInputExpiresAt                                     |
 * | Run files: until the Run deadline and   | runFileExpiresAt, runEndedFilesExpireAt                   |
 * |   end of Run content retention          |                                                           |
 * | Event and Item content: at most 30 days | EVENT_RETENTION_MS, eventExpired, eventsVisibleSince      |
 * | Run content: 30 days after the end;     | DEFAULT_RUN_RETENTION_DAYS, runExpiresAt,                 |
 * |   retention_days (1 to 30) shortens it  |   runContentExpired                                       |
 * | Webhook dedup ids: at most 30 days      | DEDUP_RETENTION_MS (receiver kit, re-exported)            |
 *
 * Result files of a Turn (no Run) default to ARTIFACT_RETENTION_MS (30 days, the Session's file retention).
 * "Reading does not extend retention" (RET-012): nothing here takes a read time as a start. Expired content
 * is hidden at read time: content is gone exactly at its expiry instant (isExpired, RET-014).
 *
 * Pure: numbers in, numbers or booleans out; times are ms since the epoch of the virtual clock. Periods that
 * are not retention (download address lifetime, preparation deadline, SSE and webhook timings) live with
 * their rules.
 */

/** One hour and one day in ms (every day-based period below counts 24-hour days of the virtual clock). */
export const HOUR_MS = 60 * 60 * 1000
export const DAY_MS = 24 * HOUR_MS

/** RET-001: an idempotency receipt is kept at least 24 hours (and until its execution ends: receiptHolds). */
export const IDEMPOTENCY_RETENTION_MS = 24 * HOUR_MS
/** RET-003: a Session is kept 30 days idle (beta default). */
export const SESSION_IDLE_MS = 30 * DAY_MS
/** RET-005: a file uploaded ahead (POST /v1/files) is kept 24 hours unless used as input in that time. */
export const PRE_UPLOAD_RETENTION_MS = 24 * HOUR_MS
/** RET-007: Session files are kept 30 days from upload. */
export const SESSION_FILE_RETENTION_MS = 30 * DAY_MS
/** RET-007: a pre-uploaded file used as input gets 30 days from that moment. */
export const BOUND_FILE_RETENTION_MS = 30 * DAY_MS
/** Result files default to 30 days (Run content and Session retention); Runs give their own (RET-009). */
export const ARTIFACT_RETENTION_MS = 30 * DAY_MS
/** EVT-003: Event and Item content is kept at most 30 days. */
export const EVENT_RETENTION_MS = 30 * DAY_MS
/** RET-010: Run content is kept 30 days after the Run ends unless retention_days (1 to 30) shortens it. */
export const DEFAULT_RUN_RETENTION_DAYS = 30
/**
 * RET-011: a webhook receiver keeps dedup ids at most 30 days. The standalone receiver kit
 * (webhooks/kit/dedup.ts) holds its own copy, since it imports nothing of the mock; a test keeps them equal.
 */
export const DEDUP_RETENTION_MS = 30 * DAY_MS

/** RET-014, RET-013: content with an expiry instant is gone exactly at it (hidden at read time). */
export const isExpired = (expiresAtMs: number, nowMs: number): boolean => nowMs >= expiresAtMs

/** RET-001: when a receipt accepted at `acceptedAtMs` stops answering by time (idempotency_expires_at). */
export const idempotencyExpiresAt = (acceptedAtMs: number): number =>
  acceptedAtMs + IDEMPOTENCY_RETENTION_MS

/** RET-002: a stored receipt answers while within its retention or while its execution has not ended. */
export const receiptHolds = (expiresAtMs: number, nowMs: number, executionOpen: boolean): boolean =>
  !isExpired(expiresAtMs, nowMs) || executionOpen

/** RET-003: when a Session expires: 30 days after its last activity (the Session's expires_at). */
export const sessionExpiresAt = (lastActivityAtMs: number): number =>
  lastActivityAtMs + SESSION_IDLE_MS

/** RET-003: whether a Session is past its idle retention at `nowMs` (410 SESSION_EXPIRED). */
export const sessionExpired = (lastActivityAtMs: number, nowMs: number): boolean =>
  isExpired(sessionExpiresAt(lastActivityAtMs), nowMs)

/** RET-005, RET-007: the expiry of a file uploaded at `uploadedAtMs`: 30 days in a Session, else 24 hours. */
export const uploadedFileExpiresAt = (uploadedAtMs: number, inSession: boolean): number =>
  uploadedAtMs + (inSession ? SESSION_FILE_RETENTION_MS : PRE_UPLOAD_RETENTION_MS)

/** RET-007: the new expiry of an input file first given to an execution at `boundAtMs`. */
export const boundFileExpiresAt = (boundAtMs: number): number => boundAtMs + BOUND_FILE_RETENTION_MS

/** The default expiry of a result file created at `createdAtMs` (a Turn's; Runs use runFileExpiresAt). */
export const artifactExpiresAt = (createdAtMs: number): number =>
  createdAtMs + ARTIFACT_RETENTION_MS

/**
 * RET-009: a Run's files (input files bound to it and its result files) are kept until the Run deadline and
 * the end of its content retention. While the Run runs its end is unknown, so the bound is the deadline plus
 * retention_days; when it ends, runEndedFilesExpireAt gives the exact instant.
 */
export const runFileExpiresAt = (deadlineAtMs: number, retentionDays: number): number =>
  deadlineAtMs + retentionDays * DAY_MS

/**
 * RET-009, RET-010: once a Run ended, its files expire with its content (completed_at + retention_days), or at
 * its deadline if that were later (never: a Run ends by its deadline and keeps its content at least a day).
 */
export const runEndedFilesExpireAt = (
  completedAtMs: number,
  deadlineAtMs: number,
  retentionDays: number,
): number => Math.max(deadlineAtMs, completedAtMs + retentionDays * DAY_MS)

/**
 * RET-007, RET-008: the expiry of an input file when it is bound to an execution. A Session file keeps its
 * expiry (30 days from upload; using the Session does not extend it); a pre-uploaded file given to a Turn gets
 * 30 days from that moment; one given to a Run lives with the Run's files (`runFilesUntilMs`).
 */
export const boundInputExpiresAt = (
  file: { expiresAtMs: number; inSession: boolean },
  boundAtMs: number,
  runFilesUntilMs?: number,
): number =>
  file.inSession ? file.expiresAtMs : (runFilesUntilMs ?? boundFileExpiresAt(boundAtMs))

/** RET-010: Run content is kept retention_days after the Run ends; null while it runs. */
export const runExpiresAt = (completedAt: number | null, retentionDays: number): number | null =>
  completedAt === null ? null : completedAt + retentionDays * DAY_MS

/** RET-010, RET-012: whether a Run's content is past retention at `nowMs` (reading never extends it). */
export const runContentExpired = (
  completedAt: number | null,
  retentionDays: number,
  nowMs: number,
): boolean => {
  const at = runExpiresAt(completedAt, retentionDays)
  return at !== null && isExpired(at, nowMs)
}

/** EVT-003: whether an event created at `createdAtMs` is past retention at `nowMs` (SSE-017, replay). */
export const eventExpired = (createdAtMs: number, nowMs: number): boolean =>
  isExpired(createdAtMs + EVENT_RETENTION_MS, nowMs)

/**
 * EVT-003: events created strictly after this instant are still within retention at `nowMs` (the bound of
 * the store's visible-events query; equivalent to !eventExpired(created_at, nowMs)).
 */
export const eventsVisibleSince = (nowMs: number): number => nowMs - EVENT_RETENTION_MS
