/**
 * The mutation self-test's variants: each a realistic bug of a real implementation, made by a textual patch of
 * a copy of the mock (mock/, spec/, fixtures/). `find` must occur exactly once in its file, so a refactor that
 * moves the code makes the variant stale (reported, and refused by the test in variants.test.ts) instead of
 * silently testing nothing. `expect` names the requirement ids whose checks must fail on the variant: the run
 * selects their checks (`--wide` runs their whole areas, to show what else catches it).
 */
export type Patch = { file: string; find: string; replace: string }

export type Variant = {
  name: string
  /** The bug, as a real implementation would have it. */
  bug: string
  patches: Patch[]
  /** Requirement ids at least one of which must fail; the run selects their checks. */
  expect: string[]
  /**
   * Why a black box cannot see the bug on a real target (no control API: no virtual time, no fixtures, no
   * reset; call rates off in a rehearsal): a real-deployment mode run that misses it is then no failure.
   */
  realMiss?: string
}

export const VARIANTS: readonly Variant[] = [
  {
    name: 'status-of-a-code',
    bug: 'SESSION_BUSY answered 400 instead of 409',
    patches: [
      {
        // The mock's catalog is generated from spec/errors.yaml (npm run generate).
        file: 'spec/generated/errors.ts',
        find: '"SESSION_BUSY": {\n    "http": {\n      "status": [\n        409',
        replace: '"SESSION_BUSY": {\n    "http": {\n      "status": [\n        400',
      },
    ],
    expect: ['STATE-024'],
  },
  {
    name: 'retryable-flag-of-a-code',
    bug: 'IDEMPOTENCY_CONFLICT marked retryable',
    patches: [
      {
        file: 'spec/generated/errors.ts',
        find: '"IDEMPOTENCY_CONFLICT": {\n    "http": {\n      "status": [\n        409\n      ],\n      "retryable": false',
        replace:
          '"IDEMPOTENCY_CONFLICT": {\n    "http": {\n      "status": [\n        409\n      ],\n      "retryable": true',
      },
    ],
    expect: ['IDEM-002', 'IDEM-004', 'ERR-041', 'EP-006'],
  },
  {
    name: 'no-retry-after-on-errors',
    bug: 'errors that need Retry-After (429 RATE_LIMITED, 503s) are sent without it',
    patches: [
      {
        file: 'mock/errors.ts',
        find: "if (retryAfter === true || (retryAfter === 'maybe' && apiError.retryAfterS !== undefined)) {",
        replace: 'if (false) {',
      },
    ],
    expect: ['RATE-005', 'ERR-083', 'ERR-008'],
  },
  {
    name: 'request-id-header-differs',
    bug: 'X-Request-Id of an error is not the envelope request_id',
    patches: [
      {
        file: 'mock/errors.ts',
        find: "  answerHeader(c, 'X-Request-Id', requestId)",
        replace: "  answerHeader(c, 'X-Request-Id', deps.ids.requestId())",
      },
    ],
    expect: ['ERR-005'],
  },
  {
    name: 'error-cacheable',
    bug: 'errors are sent cacheable (Cache-Control: max-age=60 instead of no-store)',
    patches: [
      {
        file: 'mock/errors.ts',
        find: "  answerHeader(c, 'Cache-Control', 'no-store')",
        replace: "  answerHeader(c, 'Cache-Control', 'max-age=60')",
      },
    ],
    expect: ['ERR-007'],
  },
  {
    name: 'replay-creates-new-work',
    bug: 'an idempotent replay returns the stored receipt but runs the request again',
    patches: [
      {
        file: 'mock/http/route.ts',
        find: '  if (replayed) return replayed\n',
        replace: '  if (replayed) {\n    handler(c, requestOf(c, op))\n    return replayed\n  }\n',
      },
    ],
    expect: ['IDEM-001', 'IDEM-008', 'STATE-003'],
  },
  {
    name: 'same-key-other-body-accepted',
    bug: 'the same Idempotency-Key with another body replays the first receipt instead of 409',
    patches: [
      {
        file: 'mock/http/route.ts',
        find: 'if (stored.fingerprint !== fingerprint) {',
        replace: 'if (false && stored.fingerprint !== fingerprint) {',
      },
    ],
    expect: ['IDEM-002', 'IDEM-004', 'ERR-041', 'EP-006'],
  },
  {
    name: 'metadata-17-keys',
    bug: 'metadata with 17 keys accepted (off by one)',
    patches: [
      {
        file: 'spec/openapi.yaml',
        find: 'at most 16 keys; key 1 to 64 characters; string value up to 512 characters."\n      maxProperties: 16',
        replace:
          'at most 16 keys; key 1 to 64 characters; string value up to 512 characters."\n      maxProperties: 17',
      },
    ],
    expect: ['SES-013'],
  },
  {
    name: 'page-limit-101',
    bug: 'limit=101 accepted on list paths (off by one)',
    patches: [
      {
        file: 'spec/openapi.yaml',
        find: '      description: Page size, 1 to 100 (default 50).\n      schema:\n        type: integer\n        minimum: 1\n        maximum: 100',
        replace:
          '      description: Page size, 1 to 100 (default 50).\n      schema:\n        type: integer\n        minimum: 1\n        maximum: 101',
      },
    ],
    expect: ['RUN-016'],
  },
  {
    name: 'outputs-before-the-end',
    bug: "a Run's outputs are listed while it still runs",
    patches: [
      {
        file: 'mock/routes/runs.ts',
        find: '  if (!r.terminal) return { items: [], next_cursor: null }\n',
        replace: '',
      },
    ],
    expect: ['RUN-010', 'RUN-011'],
  },
  {
    name: 'sse-resume-off-by-one',
    bug: 'SSE resume with Last-Event-ID replays the event named by the cursor',
    patches: [
      {
        file: 'mock/routes/events.ts',
        find: '  return event.sequence\n}',
        replace: '  return event.sequence - 1\n}',
      },
    ],
    expect: ['SSE-012', 'SSE-013'],
  },
  {
    name: 'webhook-signed-over-reserialised-json',
    bug: 'the signature is computed over re-serialised JSON, not the bytes sent',
    patches: [
      {
        file: 'mock/webhooks/delivery.ts',
        find: "'Service-Signature': signatureHeader(endpoint.secret, nowMs, bytes),",
        replace:
          "'Service-Signature': signatureHeader(endpoint.secret, nowMs, Buffer.from(JSON.stringify(JSON.parse(d.body), null, 1))),",
      },
    ],
    expect: ['WHN-009'],
  },
  {
    name: 'webhook-signed-without-timestamp',
    bug: 'the signature covers the body only, not "<timestamp>." before it',
    patches: [
      {
        file: 'mock/webhooks/signer.ts',
        find: "    .update(Buffer.from(`${t}.`, 'ascii'))\n",
        replace: '',
      },
    ],
    expect: ['WHN-009'],
  },
  {
    name: 'webhook-retry-schedule-shifted',
    bug: 'retry offsets counted from the previous attempt instead of the first',
    patches: [
      {
        file: 'mock/webhooks/delivery.ts',
        find: '      ? firstAt + RETRY_OFFSETS_S[attempt - 1]! * 1000',
        replace: '      ? nowMs + RETRY_OFFSETS_S[attempt - 1]! * 1000',
      },
    ],
    expect: ['WHN-021'],
  },
  {
    name: 'download-token-twice',
    bug: 'a one-use download address can be used twice',
    patches: [
      {
        file: 'mock/store/files.ts',
        find: "'UPDATE download_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL'",
        replace: "'UPDATE download_tokens SET used_at = ? WHERE token_hash = ?'",
      },
      {
        file: 'mock/access/access.ts',
        find: '    issued.used_at !== null ||\n',
        replace: '',
      },
    ],
    expect: ['ART-005'],
  },
  {
    name: 'accept-rate-11',
    bug: 'the Accept call rate allows 11 requests per minute',
    patches: [
      {
        file: 'mock/domain/rate-limits.ts',
        find: '{ accept: 10, read: 60 }',
        replace: '{ accept: 11, read: 60 }',
      },
    ],
    expect: ['RATE-001'],
  },
  {
    name: 'receipt-without-idempotency-expiry',
    bug: 'the Session receipt lacks idempotency_expires_at',
    patches: [
      {
        file: 'mock/http/receipt-bodies.ts',
        find: '  idempotency_expires_at: idempotencyExpiresAt,\n  status_url: `/v1/sessions/${sessionId}/turns/${turnId}`,',
        replace: '  status_url: `/v1/sessions/${sessionId}/turns/${turnId}`,',
      },
    ],
    expect: ['SES-001'],
  },
  {
    name: 'cancel-changes-terminal-run',
    bug: 'cancel of an ended Run answers 202 and sets it to CANCEL_REQUESTED',
    patches: [
      {
        file: 'mock/routes/runs.ts',
        find: '    if (run.terminal) return { status: 200, body: runDetail(deps, run) }\n',
        replace: '',
      },
    ],
    expect: ['STATE-011'],
  },
  {
    name: 'session-retention-31-days',
    bug: 'an idle Session is kept 31 days instead of 30',
    patches: [
      {
        file: 'mock/domain/retention.ts',
        find: 'export const SESSION_IDLE_MS = 30 * DAY_MS',
        replace: 'export const SESSION_IDLE_MS = 31 * DAY_MS',
      },
    ],
    expect: ['RET-003'],
  },
  {
    name: 'session-busy-not-enforced',
    bug: 'a second Turn is accepted while the first still runs',
    patches: [
      {
        file: 'mock/execution/accept.ts',
        find: '  if (current && !current.terminal)\n',
        replace: '  if (false && current && !current.terminal)\n',
      },
    ],
    expect: ['STATE-024'],
  },
  {
    name: 'closed-session-accepts-input',
    bug: 'a closed Session still accepts a Turn',
    patches: [
      {
        file: 'mock/execution/accept.ts',
        find: "  if (session.status === 'CLOSED') throw new ApiError('SESSION_CLOSED')\n",
        replace: '',
      },
    ],
    expect: ['STATE-025', 'SES-024'],
  },
  {
    name: 'cross-project-session-visible',
    bug: "a key sees another Project's Session",
    patches: [
      {
        file: 'mock/access/access.ts',
        find: '  if (!session || session.project_id !== grant.projectId || session.deleted_at !== null)\n    throw new ApiError',
        replace: '  if (!session || session.deleted_at !== null)\n    throw new ApiError',
      },
      {
        file: 'mock/access/access.ts',
        find: '  if (!grant.deploymentIds.includes(session.deployment_id))\n    throw new ApiError',
        replace: '  if (false)\n    throw new ApiError',
      },
    ],
    expect: ['AUTH-009'],
  },
  {
    name: 'deleted-session-readable',
    bug: "a deleted Session's Turn can still be read",
    patches: [
      {
        file: 'mock/access/access.ts',
        find: "  if (!session || session.project_id !== grant.projectId || session.deleted_at !== null)\n    throw new ApiError('NOT_FOUND', { message: 'No such Session.' })\n  // RUN-037",
        replace:
          "  if (!session || session.project_id !== grant.projectId)\n    throw new ApiError('NOT_FOUND', { message: 'No such Session.' })\n  // RUN-037",
      },
    ],
    expect: ['DEL-001', 'SES-025'],
  },
  {
    name: 'sse-frame-without-id',
    bug: 'SSE event frames are sent without their id line (no resume point for a client)',
    patches: [
      {
        file: 'mock/events/public.ts',
        find: '  return `id: ${e.event_id}\\nevent: ${e.type}\\ndata: ${JSON.stringify(publicEvent(e))}\\n\\n`',
        replace: '  return `event: ${e.type}\\ndata: ${JSON.stringify(publicEvent(e))}\\n\\n`',
      },
    ],
    expect: ['SSE-005', 'SSE-003', 'SSE-012'],
  },
  {
    name: 'beta-gate-open',
    bug: 'a Project not approved for the private beta is served',
    patches: [
      {
        file: 'mock/middleware/api-key.ts',
        find: "    if (!found.approved) throw new ApiError('NOT_FOUND')\n",
        replace: '',
      },
    ],
    expect: ['SVC-006', 'ERR-026'],
  },
  {
    name: 'revoked-key-accepted',
    bug: 'a revoked API key still authenticates',
    patches: [
      {
        file: 'mock/access/access.ts',
        find: '  !key.revoked && (key.expires_at',
        replace: '  (key.expires_at',
      },
    ],
    expect: ['AUTH-007', 'ERR-028'],
  },
]
