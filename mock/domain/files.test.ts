/**
 * Properties of the stored-file rules: expiry at exactly expires_at, the 50 SU minimum balance, Project storage,
 * the SHA-256 digest, and whether a stored file may be given as Turn or Run input.
 */
import { webcrypto } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  balanceAllowsFiles,
  type InputFileFacts,
  inputFileProblem,
  type InputFileUse,
  sha256Hex,
  storageAllows,
} from './files.js'
import {
  BOUND_FILE_RETENTION_MS,
  isExpired,
  PRE_UPLOAD_RETENTION_MS,
  SESSION_FILE_RETENTION_MS,
} from './retention.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

const HOUR = 3_600_000
const DAY = 24 * HOUR
const MiB = 1024 * 1024
/** 2000-01-01 .. 2100-01-01 */
const instant = fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 })

const bare = (m: string) => m.split(';')[0]!.trim().toLowerCase()

// Each fact passes its check more often than not, so files with exactly one defect are common.
const facts: fc.Arbitrary<InputFileFacts> = fc.record({
  kind: fc.constantFrom<InputFileFacts['kind']>('INPUT', 'INPUT', 'INPUT', 'ARTIFACT'),
  project_id: fc.constantFrom('p1', 'p1', 'p1', 'p2'),
  session_id: fc.constantFrom(null, null, 's1', 's2'),
  bound_to: fc.constantFrom(null, null, 'e1', 'e2'),
  mime_type: fc.constantFrom('text/plain', 'application/pdf', 'image/png', 'Image/PNG; x=1'),
  status: fc.constantFrom('READY', 'READY', 'READY', 'PENDING'),
  expires_at: fc.integer({ min: -2, max: 2 }).map((d) => 1_000_000 + d),
  deleted: fc.constantFrom(false, false, false, true),
})
const use: fc.Arbitrary<InputFileUse> = fc.record(
  {
    projectId: fc.constantFrom('p1', 'p1', 'p1', 'p2'),
    nowMs: fc.integer({ min: -2, max: 2 }).map((d) => 1_000_000 + d),
    sessionId: fc.constantFrom('s1', 's1', 's2'),
    executionId: fc.constantFrom('e1', 'e1', 'e2'),
    acceptedMimeTypes: fc.option(
      fc.uniqueArray(
        fc.constantFrom('text/plain', 'image/png', 'IMAGE/png;q=1', 'application/json'),
        { maxLength: 3 },
      ),
      { freq: 2 },
    ),
  },
  { requiredKeys: ['projectId', 'nowMs'] },
)

describe('stored file rules', () => {
  it('[RET-014][RET-012] a file is gone exactly at its expires_at and stays gone; retention periods are 24 hours and 30 days', () => {
    expect(PRE_UPLOAD_RETENTION_MS).toBe(24 * HOUR)
    expect(SESSION_FILE_RETENTION_MS).toBe(30 * DAY)
    expect(BOUND_FILE_RETENTION_MS).toBe(30 * DAY)
    fc.assert(
      fc.property(
        instant,
        fc.oneof(fc.integer({ min: -1, max: 1 }), fc.integer({ min: -DAY, max: DAY })),
        fc.nat(DAY),
        (expiresAt, d, later) => {
          expect(isExpired(expiresAt, expiresAt + d)).toBe(d >= 0)
          if (isExpired(expiresAt, expiresAt + d))
            expect(isExpired(expiresAt, expiresAt + d + later)).toBe(true)
        },
      ),
      params,
    )
  })

  it('[BUD-008] file operations need a balance of at least 50 SU', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), (su) => {
        expect(balanceAllowsFiles(su)).toBe(su >= 50)
      }),
      params,
    )
    expect(balanceAllowsFiles(50)).toBe(true)
    expect(balanceAllowsFiles(49.999)).toBe(false)
  })

  it('[SIZE-013] uploads admitted one after another never take Project storage over its limit, and one is refused only when it would', () => {
    fc.assert(
      fc.property(
        // An upload is a size, or (null) exactly the room left.
        fc.array(fc.option(fc.integer({ min: 0, max: 20 * MiB }), { freq: 8 }), {
          maxLength: 60,
          size: 'max',
        }),
        fc.constantFrom(500 * MiB, 64 * MiB),
        (sizes, limit) => {
          let inUse = 0
          for (const size of sizes) {
            const bytes = size ?? limit - inUse
            const ok = storageAllows(inUse, bytes, limit)
            expect(ok).toBe(inUse + bytes <= limit)
            if (ok) inUse += bytes
            expect(inUse).toBeLessThanOrEqual(limit)
            if (size === null) expect(storageAllows(inUse - bytes, bytes + 1, limit)).toBe(false)
          }
        },
      ),
      params,
    )
  })

  it('[FILE-002] sha256 is the lowercase hex SHA-256 digest of the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 512 }), async (bytes) => {
        const digest = new Uint8Array(await webcrypto.subtle.digest('SHA-256', bytes))
        const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
        expect(sha256Hex(bytes)).toBe(hex)
        expect(sha256Hex(bytes)).toMatch(/^[0-9a-f]{64}$/)
      }),
      params,
    )
  })

  it('[SVC-002][SES-006][RET-006][FILE-009][DEP-005] a stored file is usable as input exactly when it is this Project’s live, ready, unexpired input file, of this Session, not bound elsewhere, of an accepted type', () => {
    fc.assert(
      fc.property(facts, use, (file, u) => {
        const problem = inputFileProblem(file, u)
        const visible = file.kind === 'INPUT' && !file.deleted && file.project_id === u.projectId
        const inSession = file.session_id === null || file.session_id === u.sessionId
        const live = u.nowMs < file.expires_at && file.status === 'READY'
        const free = file.bound_to === null || file.bound_to === u.executionId
        const accepted =
          !u.acceptedMimeTypes || u.acceptedMimeTypes.map(bare).includes(bare(file.mime_type))
        expect(problem === undefined).toBe(visible && inSession && live && free && accepted)

        // Another Project's, a deleted or a result file answers exactly as an absent one (SVC-002).
        if (!visible) expect(problem).toEqual(inputFileProblem(undefined, u))
        if (!visible) expect(problem?.code).toBe('NOT_FOUND')
        // Another Session's file is outside access (SES-006).
        else if (!inSession) expect(problem?.code).toBe('NOT_FOUND')
        // An expired or not-ready file (RET-006), then one bound to another execution (FILE-009).
        else if (!live) expect(problem?.code).toBe('FILE_EXPIRED')
        else if (!free) expect(problem?.code).toBe('INVALID_INPUT')
        // The Deployment does not accept the type (DEP-005).
        else if (!accepted) expect(problem?.code).toBe('UNSUPPORTED_FILE_TYPE')
      }),
      params,
    )
  })

  it('[RET-005][RET-006] a pre-uploaded file is usable until 24 hours after upload and refused with FILE_EXPIRED from then on', () => {
    fc.assert(
      fc.property(
        instant,
        fc.oneof(
          fc.integer({ min: 24 * HOUR - 1, max: 24 * HOUR + 1 }),
          fc.integer({ min: 0, max: 2 * DAY }),
        ),
        (uploadedAt, after) => {
          const file: InputFileFacts = {
            kind: 'INPUT',
            project_id: 'p',
            session_id: null,
            bound_to: null,
            mime_type: 'text/plain',
            status: 'READY',
            expires_at: uploadedAt + PRE_UPLOAD_RETENTION_MS,
            deleted: false,
          }
          const problem = inputFileProblem(file, { projectId: 'p', nowMs: uploadedAt + after })
          if (after < 24 * HOUR) expect(problem).toBeUndefined()
          else expect(problem).toEqual({ code: 'FILE_EXPIRED', reason: 'EXPIRED' })
        },
      ),
      params,
    )
  })
})
