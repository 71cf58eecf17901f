import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BOUND_FILE_RETENTION_MS, PRE_UPLOAD_RETENTION_MS } from '../domain/retention.js'
import { createMock, type Mock } from '../index.js'
import {
  bindFileToExecution,
  createArtifact,
  deleteExecutionArtifacts,
  deleteSessionFiles,
  getUsableInputFile,
  insertInputFile,
  readFileBytes,
  storageInUse,
} from './files.js'

const A = 'aaaaaaaa-0000-4000-8000-000000000000'
const C = 'cccccccc-0000-4000-8000-000000000000'
const T0 = Date.parse('2026-11-02T09:00:00Z')
const HOUR = 3600_000

let mock: Mock
let n = 0
beforeEach(async () => {
  mock = await createMock()
})
afterEach(() => mock.close())

const id = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`
const bytes = (size: number) => new Uint8Array(size).fill(97)

function input(opts: { project?: string; size?: number; session?: string; at?: number } = {}) {
  const at = opts.at ?? T0
  return insertInputFile(mock.deps.db, {
    id: id(),
    projectId: opts.project ?? A,
    sessionId: opts.session ?? null,
    filename: 'a.txt',
    mimeType: 'text/plain',
    bytes: bytes(opts.size ?? 10),
    nowMs: at,
    expiresAtMs: at + PRE_UPLOAD_RETENTION_MS,
  })
}

describe('files store', () => {
  it('keeps a running storage total per Project: uploads and artifacts add, deletion gives back', () => {
    const { db } = mock.deps
    input({ size: 10 })
    input({ size: 5, session: 's1' })
    input({ project: C, size: 7 })
    createArtifact(db, {
      artifactId: id(),
      fileId: id(),
      projectId: A,
      sessionId: 's1',
      executionId: 't1',
      filename: 'r.txt',
      mimeType: 'text/plain',
      bytes: bytes(3),
      nowMs: T0,
    })
    createArtifact(db, {
      artifactId: id(),
      fileId: id(),
      projectId: A,
      executionId: 'run1',
      filename: 'r.txt',
      mimeType: 'text/plain',
      bytes: bytes(4),
      nowMs: T0,
    })
    expect(storageInUse(db, A, T0)).toBe(22)
    expect(storageInUse(db, C, T0)).toBe(7)
    expect(deleteSessionFiles(db, 's1')).toBe(2)
    expect(storageInUse(db, A, T0)).toBe(14)
    expect(deleteExecutionArtifacts(db, 'run1')).toBe(1)
    expect(deleteExecutionArtifacts(db, 'run1')).toBe(0)
    expect(storageInUse(db, A, T0)).toBe(10)
  })

  it('gives back the storage of expired files exactly at expires_at, once, and drops their bytes', () => {
    const { db } = mock.deps
    const f = input({ size: 10 })
    input({ size: 20, at: T0 + HOUR })
    expect(storageInUse(db, A, f.expires_at - 1)).toBe(30)
    expect(readFileBytes(db, f.id)).toBeDefined()
    expect(storageInUse(db, A, f.expires_at)).toBe(20)
    expect(storageInUse(db, A, f.expires_at + 1)).toBe(20)
    expect(readFileBytes(db, f.id)).toBeUndefined()
    expect(storageInUse(db, A, f.expires_at + HOUR)).toBe(0)
  })

  it('binding gives a pre-uploaded file 30 days from that moment and keeps it from other executions', () => {
    const { db } = mock.deps
    const f = input()
    const at = T0 + 23 * HOUR
    const bound = bindFileToExecution(db, f.id, 'turn-1', at, { sessionId: 'session-1' })
    expect(bound.expires_at).toBe(at + BOUND_FILE_RETENTION_MS)
    expect(bound.session_id).toBe('session-1')
    // Binding again to the same execution (an idempotent replay) does not extend it.
    expect(bindFileToExecution(db, f.id, 'turn-1', at + HOUR).expires_at).toBe(
      at + BOUND_FILE_RETENTION_MS,
    )
    expect(storageInUse(db, A, T0 + 48 * HOUR)).toBe(10)
    expect(
      getUsableInputFile(db, f.id, {
        projectId: A,
        nowMs: at,
        sessionId: 'session-1',
        executionId: 'turn-2',
      }),
    ).toMatchObject({ ok: false, code: 'INVALID_INPUT', reason: 'BOUND_TO_ANOTHER_EXECUTION' })
    expect(() => bindFileToExecution(db, f.id, 'turn-2', at)).toThrow()
  })

  it('getUsableInputFile answers NOT_FOUND, FILE_EXPIRED or UNSUPPORTED_FILE_TYPE by the document', () => {
    const { db } = mock.deps
    const f = input()
    const s = input({ session: 'session-1' })
    const use = { projectId: A, nowMs: T0 + HOUR }
    expect(getUsableInputFile(db, f.id, use)).toMatchObject({ ok: true, file: { id: f.id } })
    expect(getUsableInputFile(db, f.id, { ...use, projectId: C })).toMatchObject({
      ok: false,
      code: 'NOT_FOUND',
    })
    expect(getUsableInputFile(db, 'nope', use)).toMatchObject({ ok: false, code: 'NOT_FOUND' })
    expect(getUsableInputFile(db, s.id, { ...use, sessionId: 'session-2' })).toMatchObject({
      ok: false,
      code: 'NOT_FOUND',
    })
    expect(getUsableInputFile(db, s.id, { ...use, sessionId: 'session-1' }).ok).toBe(true)
    expect(
      getUsableInputFile(db, f.id, { ...use, nowMs: T0 + PRE_UPLOAD_RETENTION_MS }),
    ).toMatchObject({ ok: false, code: 'FILE_EXPIRED', reason: 'EXPIRED' })
    expect(
      getUsableInputFile(db, f.id, { ...use, acceptedMimeTypes: ['application/pdf'] }),
    ).toMatchObject({ ok: false, code: 'UNSUPPORTED_FILE_TYPE' })
    deleteSessionFiles(db, 'session-1')
    expect(getUsableInputFile(db, s.id, { ...use, sessionId: 'session-1' })).toMatchObject({
      ok: false,
      code: 'NOT_FOUND',
    })
  })
})
