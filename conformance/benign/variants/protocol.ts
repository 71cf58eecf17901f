/**
 * Benign variants of the protocol (see ../variant.ts): events and SSE framing, Session items, paging, error
 * answers, headers and body layout. Each makes a choice the interface document allows and the mock does not
 * make; served as a real target, the suite must pass it.
 */
import type { BenignVariant } from '../variant.js'

/** Item ids of the item-ids-differ variant: an event id with its last group reversed (its own inverse). */
const FLIP_ID =
  'const flipId = (id: string): string => id.slice(0, 24) + [...id.slice(24)].reverse().join("")\n'

export const VARIANTS: readonly BenignVariant[] = [
  {
    name: 'item-ids-differ-from-event-ids',
    choice:
      'A Session item has its own id and sequence, not the SSE event\'s. The document: ItemEnvelope "id (uuid), ' +
      'session_id, turn_id, sequence (integer)..."; an event\'s id is its event_id, "opaque UUID; no ordering may ' +
      'be inferred from it". Nothing says an item id equals an event id or an item sequence an event sequence ' +
      '(the items read\'s query parameters: "not shown"; the mock pages with after = an item id, x-assumed).',
    patches: [
      {
        file: 'mock/events/public.ts',
        find: "export function itemEnvelope(e: EventRecord): components['schemas']['ItemEnvelope'] {\n  return {\n    id: e.event_id,\n    session_id: e.aggregate_id,\n    turn_id: e.turn_id,\n    sequence: e.sequence,",
        replace: `export ${FLIP_ID}export function itemEnvelope(e: EventRecord): components['schemas']['ItemEnvelope'] {\n  return {\n    id: flipId(e.event_id),\n    session_id: e.aggregate_id,\n    turn_id: e.turn_id,\n    sequence: 1000 + e.sequence * 2,`,
      },
      {
        file: 'mock/routes/items.ts',
        find: '      const cursor = getEvent(deps.db, after)',
        replace:
          '      const cursor = getEvent(deps.db, after.slice(0, 24) + [...after.slice(24)].reverse().join(""))',
      },
      {
        // OUTCOME item_ids name Session items, so they carry the items' ids.
        file: 'mock/store/events.ts',
        find: '      .all(sessionId, turnId, limit) as { event_id: string }[]\n  ).map((r) => r.event_id)',
        replace:
          '      .all(sessionId, turnId, limit) as { event_id: string }[]\n  ).map((r) => r.event_id.slice(0, 24) + [...r.event_id.slice(24)].reverse().join(""))',
      },
    ],
    select: ['ITEM', 'EVT-001', 'SES-022'],
    assumptions: ['listSessionItems after (x-assumed: an item id)'],
  },
  {
    name: 'duplicate-sse-events',
    choice:
      'Every SSE event is sent twice. The document: "The same event may arrive twice; drop duplicates by event_id" ' +
      '(Events > SSE streams, Reconnect).',
    patches: [
      {
        file: 'mock/events/sse.ts',
        find: '      stream.lastSequence = event.sequence\n      write(stream, eventFrame(event))\n',
        replace:
          '      stream.lastSequence = event.sequence\n      write(stream, eventFrame(event))\n      write(stream, eventFrame(event))\n',
      },
    ],
    select: ['SSE', 'EVT-001', 'EVT-002', 'EVT-004', 'ITEM-007'],
  },
  {
    name: 'sse-field-order-event-id-data',
    choice:
      'SSE frames written as event, id, data. The document: "Each event is a standard SSE frame: id = the event\'s ' +
      'event_id, event = event type, data = one line of JSON" names the fields, not their order; in the SSE ' +
      'standard the order of fields within a frame carries no meaning.',
    patches: [
      {
        file: 'mock/events/public.ts',
        find: '  return `id: ${e.event_id}\\nevent: ${e.type}\\ndata: ${JSON.stringify(publicEvent(e))}\\n\\n`',
        replace:
          '  return `event: ${e.type}\\nid: ${e.event_id}\\ndata: ${JSON.stringify(publicEvent(e))}\\n\\n`',
      },
    ],
    select: ['SSE-003', 'SSE-005', 'SSE-006', 'SSE-012', 'SSE-013', 'EVT-001'],
  },
  {
    name: 'keep-alive-at-stream-open',
    choice:
      'A keep-alive comment as soon as a stream opens. The document: "A comment line beginning with : keep-alive ' +
      'arrives about every 15 seconds and is ignored" (a comment is ignored wherever it comes).',
    patches: [
      {
        file: 'mock/events/sse.ts',
        find: '        write(stream, retryFrame(hub.limits.retryMs))\n',
        replace:
          "        write(stream, retryFrame(hub.limits.retryMs))\n        write(stream, ': keep-alive\\n\\n')\n",
      },
    ],
    select: ['SSE-003', 'SSE-005', 'SSE-006', 'SSE-012', 'SSE-013', 'EVT-001'],
  },
  {
    name: 'no-reconnection-hint',
    choice:
      'Streams start without the "retry: 1000" frame. x-assumed in spec/openapi.yaml: "The document names no ' +
      'hint; clients must not rely on one."',
    patches: [
      {
        file: 'mock/events/sse.ts',
        find: '        write(stream, retryFrame(hub.limits.retryMs))\n',
        replace: '',
      },
      {
        // The import stays used by nothing else in the file.
        file: 'mock/events/sse.ts',
        find: "import { errorFrame, eventFrame, KEEP_ALIVE_FRAME, retryFrame } from './public.js'",
        replace: "import { errorFrame, eventFrame, KEEP_ALIVE_FRAME } from './public.js'",
      },
    ],
    select: ['SSE-003', 'SSE-005', 'SSE-012', 'SSE-013', 'SSE-014', 'SSE-015'],
    assumptions: ['the "retry: 1000" frame at stream start (x-assumed)'],
  },
  {
    name: 'short-item-pages',
    choice:
      'Session item pages of at most 3 items whatever the limit, with next_cursor set while more follow. The ' +
      'document: ItemPage "items, next_cursor (uuid or null)"; List responses "at most 100 items and 256 KiB; ' +
      'default 50": a maximum, not a promise of full pages (query parameters of the items read: not shown).',
    patches: [
      {
        file: 'mock/routes/items.ts',
        find: '    const candidates = rows.slice(0, limit).map(itemEnvelope)',
        replace: '    const candidates = rows.slice(0, Math.min(limit, 3)).map(itemEnvelope)',
      },
    ],
    select: ['ITEM-001', 'ITEM-005', 'EVT-001', 'SSE-017', 'SSE-018'],
  },
  {
    name: 'short-output-pages',
    choice:
      'Output pages (the Run read, the Run outputs read, the Turn detail) of at most 1 item, with next_cursor while ' +
      'more follow. The document: "next_cursor ... for further pages of outputs"; GET /v1/runs/{run_id}/outputs ' +
      '"query limit (1 to 100, default 50)... 200 next page of the same output list": limit is a maximum.',
    patches: [
      {
        file: 'mock/execution/outputs.ts',
        find: '    rows.slice(0, limit).map((r) => r.item),',
        replace: '    rows.slice(0, Math.min(limit, 1)).map((r) => r.item),',
      },
    ],
    select: [
      'RUN-001',
      'RUN-010',
      'RUN-011',
      'RUN-017',
      'RUN-018',
      'OUT-001',
      'OUT-003',
      'OUT-005',
      'SES-017',
      'SES-022',
    ],
  },
  {
    name: 'retry-after-on-every-503',
    choice:
      'Retry-After on every 503 answer. The document: "429 and some 503 responses have header Retry-After in ' +
      'seconds"; retry rule 2: "Wait Retry-After seconds if present".',
    patches: [
      {
        file: 'mock/errors.ts',
        find: "  if (retryAfter === true || (retryAfter === 'maybe' && apiError.retryAfterS !== undefined)) {",
        replace:
          "  if (retryAfter === true || apiError.status === 503 || (retryAfter === 'maybe' && apiError.retryAfterS !== undefined)) {",
      },
    ],
    select: ['RUN-035', 'RUN-036', 'ERR-009', 'ERR-085', 'ERR-008'],
  },
  {
    name: 'request-id-base64url',
    choice:
      'X-Request-Id and request_id as 16 base64url characters instead of req_<hex>. The document: "request_id:string"; ' +
      '"Every response has header X-Request-Id equal to request_id, newly issued per request": no format.',
    patches: [
      {
        file: 'mock/util/ids.ts',
        find: "    return `req_${this.requestIdBytes.toString('hex', at, at + REQUEST_ID_BYTES)}`",
        replace: "    return this.requestIdBytes.toString('base64url', at, at + REQUEST_ID_BYTES)",
      },
    ],
    select: ['ERR-001', 'ERR-003', 'ERR-004', 'ERR-005', 'ERR-006', 'ERR-007', 'SSE-020', 'RES'],
  },
  {
    name: 'other-error-messages',
    choice:
      'Every error message is another English text. The document: "Branch on code, not on message (message is ' +
      'English text and may change)".',
    patches: [
      {
        file: 'mock/errors.ts',
        find: '      message: apiError.message,\n',
        replace: '      message: `Request not completed (${apiError.code.toLowerCase()}).`,\n',
      },
    ],
    select: [
      'ERR-001',
      'ERR-003',
      'ERR-004',
      'ERR-005',
      'ERR-027',
      'ERR-038',
      'SSE-014',
      'SSE-015',
      'RUN-019',
      'AUTH-001',
      'AUTH-009',
    ],
  },
  {
    name: 'reversed-json-key-order',
    choice:
      'JSON bodies with their keys in reverse order at every level. The document gives fields, never an order; ' +
      'JSON objects are unordered (RFC 8259).',
    patches: [
      {
        file: 'mock/http/route.ts',
        find: "  const json = 'json' in reply ? reply.json : JSON.stringify(reply.body)",
        replace:
          "  const rev = (v: unknown): unknown => Array.isArray(v) ? v.map(rev) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, rev(x)])) : v\n  const json = 'json' in reply ? JSON.stringify(rev(JSON.parse(reply.json))) : JSON.stringify(rev(reply.body))",
      },
      {
        file: 'mock/errors.ts',
        find: "  return answer(c, JSON.stringify(body), apiError.status, { 'Content-Type': 'application/json' })",
        replace:
          "  const rev = (v: unknown): unknown => Array.isArray(v) ? v.map(rev) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, rev(x)])) : v\n  return answer(c, JSON.stringify(rev(body)), apiError.status, { 'Content-Type': 'application/json' })",
      },
    ],
    select: [
      'SES-001',
      'SES-016',
      'RUN-001',
      'RUN-002',
      'ERR-001',
      'IDEM',
      'DEP',
      'ITEM-001',
      'ITEM-002',
    ],
  },
  {
    name: 'minimal-cancel-answer',
    choice:
      'The Run cancel answers {run_id, status} instead of the full Run read. The document: "POST ' +
      '/v1/runs/{run_id}/cancel ... 202 for a new cancel, 200 if already terminal" and no body shape ' +
      '(spec/openapi.yaml models it on RunDetail).',
    patches: [
      {
        file: 'mock/routes/runs.ts',
        find: '    if (run.terminal) return { status: 200, body: runDetail(deps, run) }\n',
        replace:
          '    if (run.terminal) return { status: 200, body: { run_id: run.id, status: run.status } as never }\n',
      },
      {
        file: 'mock/routes/runs.ts',
        find: '    return { status: 202, body: runDetail(deps, run), execution: run.id }',
        replace:
          '    return { status: 202, body: { run_id: run.id, status: run.status } as never, execution: run.id }',
      },
    ],
    select: ['RUN-020', 'STATE-008', 'STATE-011'],
    assumptions: ['cancelRun answer body (spec/openapi.yaml: RunDetail; the document shows none)'],
  },
  {
    name: 'deleted-content-410',
    choice:
      "A deleted Session's or Run's reads answer 410 (SESSION_EXPIRED) instead of 404. The document: \"content reads " +
      'are blocked immediately" (Deletion; DELETE rows "content reads blocked at once", "access blocked at once") ' +
      'names no status; 410 is "content gone", and after deletion "minimal billing and audit identifiers are kept ' +
      'without content".',
    patches: [
      {
        file: 'mock/access/access.ts',
        find: "  if (!session || session.project_id !== grant.projectId || session.deleted_at !== null)\n    throw new ApiError('NOT_FOUND', { message: 'No such Session.' })\n  // RUN-037",
        replace:
          "  if (!session || session.project_id !== grant.projectId)\n    throw new ApiError('NOT_FOUND', { message: 'No such Session.' })\n  if (session.deleted_at !== null && grant.deploymentIds.includes(session.deployment_id))\n    throw new ApiError('SESSION_EXPIRED', { message: 'The Session was deleted.' })\n  if (session.deleted_at !== null) throw new ApiError('NOT_FOUND', { message: 'No such Session.' })\n  // RUN-037",
      },
      {
        file: 'mock/access/access.ts',
        find: "    e.project_id !== grant.projectId ||\n    (e.deleted_at ?? null) !== null\n  )\n    throw new ApiError('NOT_FOUND', { message: 'No such Run.' })",
        replace:
          "    e.project_id !== grant.projectId\n  )\n    throw new ApiError('NOT_FOUND', { message: 'No such Run.' })\n  if ((e.deleted_at ?? null) !== null)\n    throw new ApiError('SESSION_EXPIRED', { message: 'The Run was deleted.', details: { run_id: e.id, content_expired: true } })",
      },
    ],
    select: ['DEL-001', 'SES-025', 'RUN-021', 'STATE-021'],
  },
  {
    name: 'malformed-limit-400',
    choice:
      'A malformed (non-integer) limit query, e.g. limit=ten, answers 400 INVALID_INPUT; out of range stays 422. ' +
      'The document: INVALID_INPUT "400, 422 ... body or input malformed"; 422 is for "value outside allowed ' +
      'range or schema".',
    patches: [
      {
        file: 'mock/middleware/validate.ts',
        find: '          status: 422,\n          message: `Query parameter ${p.name} is out of range or malformed.`,',
        replace:
          '          status: (/^-?\\d+$/.test(String(raw)) ? 422 : 400) as 422,\n          message: `Query parameter ${p.name} is out of range or malformed.`,',
      },
    ],
    select: ['RUN-016', 'ERR-023', 'ITEM-001'],
  },
  {
    name: 'new-event-type',
    choice:
      'Streams carry an event type unknown to 1.3.0 (turn.insight, run.insight) with known content (PROGRESS). ' +
      'The document: Versioning 2 "Within /v1 only additive changes occur: ... new event types ... Clients must ' +
      'ignore or safely handle unknown fields, event types and error codes"; "Complete list of event types: not ' +
      'shown".',
    patches: [
      {
        file: 'mock/events/forward-compat.ts',
        find: "  if (!deps.forwardCompat.enabled || ev.type !== 'status') return",
        replace: "  if (ev.type !== 'status') return",
      },
      {
        file: 'mock/events/forward-compat.ts',
        find: "  const data = {\n    kind: FUTURE_CONTENT_KIND,\n    note: 'an event type and content kind unknown to 1.3.0 clients: ignore them',\n  } as unknown as EventRecord['data']",
        replace:
          "  void FUTURE_CONTENT_KIND\n  const data = { kind: 'PROGRESS', phase: 'EXECUTING' } as unknown as EventRecord['data']",
      },
    ],
    select: [
      'SSE-003',
      'SSE-005',
      'SSE-006',
      'SSE-008',
      'SSE-012',
      'SSE-013',
      'EVT-001',
      'ITEM-001',
      'ITEM-005',
      'VER-003',
    ],
  },
  {
    name: 'new-content-kind',
    choice:
      'Session items (and events) of a content kind unknown to 1.3.0 (INSIGHT). The document lists the content ' +
      'kinds of 1.3.0 and says "payload fields of each content kind: not shown"; Versioning 2: new event types ' +
      'and response fields are additive, clients "ignore or safely handle" the unknown.',
    patches: [
      {
        file: 'mock/events/forward-compat.ts',
        find: "  if (!deps.forwardCompat.enabled || ev.type !== 'status') return",
        replace: "  if (ev.type !== 'status') return",
      },
    ],
    select: [
      'ITEM-001',
      'ITEM-003',
      'ITEM-005',
      'EVT-001',
      'SSE-003',
      'SSE-006',
      'SSE-012',
      'VER-003',
    ],
  },
  {
    name: 'new-code-for-retryable-503',
    choice:
      'Retryable 503 errors carry a code unknown to 1.3.0 (CAPACITY_REBALANCING), status, retryable and ' +
      'Retry-After unchanged. The document: "Unknown codes must be handled by retryable and HTTP status; new codes ' +
      'may be added."',
    patches: [
      {
        file: 'mock/errors.ts',
        find: '    deps.forwardCompat?.enabled &&\n    apiError.retryable &&\n    (apiError.status === 429 || apiError.status === 503)',
        replace: '    apiError.retryable &&\n    apiError.status === 503',
      },
    ],
    select: ['RUN-035', 'RUN-036', 'ERR-009', 'ERR-085', 'ERR-008'],
  },
  {
    name: 'outcome-item-ids-final-only',
    choice:
      'OUTCOME item_ids list only the final results (ARTIFACT and FINAL or PARTIAL messages), not intermediate ' +
      'messages. The document: OUTCOME "item_ids (array of uuid, at most 100)": which items it names is not shown.',
    patches: [
      {
        file: 'mock/store/events.ts',
        find: "           AND json_extract(data_json, '$.kind') IN ('MESSAGE', 'ARTIFACT') ORDER BY sequence",
        replace:
          "           AND json_extract(data_json, '$.kind') IN ('MESSAGE', 'ARTIFACT') AND COALESCE(json_extract(data_json, '$.visibility'), 'FINAL') <> 'INTERMEDIATE' ORDER BY sequence",
      },
    ],
    select: ['ITEM-001', 'ITEM-005', 'EVT-001', 'OUT-005'],
  },
]
