/**
 * Artifacts (Endpoints > Files and artifacts): metadata read, one-use download addresses (60 seconds of virtual
 * time, permission re-checked at every issue, never issued for deleted or expired files) and the tokenised
 * content path, where the token replaces the bearer key. Only a SHA-256 of a token is stored; the request log
 * shows the route pattern, never the query string.
 */
import type { Hono } from 'hono'
import type { Env } from '../deps.js'
import {
  DOWNLOAD_TOKEN_LIFETIME_MS,
  MINIMUM_FILE_BALANCE_SU,
  balanceAllowsFiles,
  sha256Hex,
} from '../domain/files.js'
import { isExpired } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { route } from '../http/route.js'
import { rateLimit } from '../middleware/rate-limit.js'
import { consumeDownload, insertDownloadToken, type StoredFile } from '../store/files.js'
import { getProject } from '../store/projects.js'
import {
  downloadGrant,
  downloadNotFound,
  requireReviewPermission,
  visibleArtifact,
} from '../access/access.js'
import { artifactDetail } from '../domain/file-views.js'
import { chargeDownload } from '../execution/ledger.js'
import { iso } from '../util/iso.js'

/** ART-006, RET-013: a deleted or out-of-retention artifact is gone (410 ARTIFACT_EXPIRED). */
function requireRetained(a: StoredFile, nowMs: number): void {
  if (a.deleted || isExpired(a.expires_at, nowMs)) {
    throw new ApiError('ARTIFACT_EXPIRED', {
      message: 'The result file is past retention or deleted.',
      details: { artifact_id: a.artifact_id, expires_at: iso(a.expires_at) },
    })
  }
}

/**
 * ERR-087: a result file published while it is still being prepared is not ready yet (409 ARTIFACT_NOT_READY,
 * retryable) until its preparation ends.
 */
function requireReady(a: StoredFile, nowMs: number): void {
  if (a.ready_at !== null && nowMs < a.ready_at) {
    throw new ApiError('ARTIFACT_NOT_READY', {
      message: 'The result file is still being prepared; try again later.',
      details: { artifact_id: a.artifact_id },
    })
  }
}

const contentDisposition = (filename: string) =>
  `attachment; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)}`

export function artifactRoutes(app: Hono<Env>): void {
  route(app, 'getArtifact', (c, req) => {
    const a = visibleArtifact(c.var.deps, req.auth, req.params.artifact_id)
    requireReviewPermission(req.auth, a)
    requireRetained(a, c.var.deps.clock.nowMs())
    requireReady(a, c.var.deps.clock.nowMs())
    return { status: 200, body: artifactDetail(a) }
  })

  route(app, 'createArtifactDownload', (c, req) => {
    const { db, clock, ids } = c.var.deps
    const auth = req.auth
    const nowMs = clock.nowMs()
    const a = visibleArtifact(c.var.deps, auth, req.params.artifact_id)
    // ACT-021: a review file of an approval also needs the action's approval permission (re-checked per issue).
    requireReviewPermission(auth, a)
    requireRetained(a, nowMs)
    requireReady(a, nowMs)
    // BUD-008: downloads need a balance of at least 50 SU; ART-003: issuing is not charged (consuming is).
    if (!balanceAllowsFiles(getProject(db, auth.projectId)!.su_balance)) {
      throw new ApiError('MINIMUM_SU_REQUIRED', {
        message: `File operations need an account balance of at least ${MINIMUM_FILE_BALANCE_SU} SU (not charged).`,
        details: { minimum_su: MINIMUM_FILE_BALANCE_SU },
      })
    }
    const token = ids.secretToken()
    const expiresAt = nowMs + DOWNLOAD_TOKEN_LIFETIME_MS
    insertDownloadToken(db, {
      token_hash: sha256Hex(Buffer.from(token, 'utf8')),
      artifact_id: a.artifact_id!,
      api_key: auth.key,
      issued_at: nowMs,
      expires_at: expiresAt,
    })
    return {
      status: 200,
      body: {
        url: `/v1/artifacts/${a.artifact_id}/content?token=${token}`,
        expires_at: iso(expiresAt),
      },
    }
  })

  route(app, 'getArtifactContent', async (c, req) => {
    const deps = c.var.deps
    const artifactId = req.params.artifact_id
    const grant = downloadGrant(deps, artifactId, c.req.query('token'))
    // RATE-002: a download is a Read-class call of the key that issued the address.
    if (grant.auth) {
      c.set('auth', grant.auth)
      rateLimit('read')(c)
    }
    // ART-003: the address costs SU only now, when it is consumed (one charge: the token is used once).
    const served = deps.db.tx(() => {
      const consumed = consumeDownload(deps.db, grant.tokenHash, artifactId, deps.clock.nowMs())
      if (consumed) chargeDownload(deps, consumed.file)
      return consumed
    })
    if (!served) throw downloadNotFound()
    // ART-007: Range is ignored: always the whole file, 200.
    return c.body(served.bytes, 200, {
      'Content-Type': served.file.mime_type,
      'Content-Length': String(served.bytes.byteLength),
      'Content-Disposition': contentDisposition(served.file.filename),
      'Accept-Ranges': 'none',
      'X-Content-Type-Options': 'nosniff',
    })
  })
}
