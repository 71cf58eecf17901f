/**
 * Benign variants of resources (see ../variant.ts): webhook management answers, file types and inputs, usage,
 * idempotency keys, routing errors, foreign ids and JSON limits. Each makes a choice the interface document
 * allows and the mock does not make; served as a real target, the suite must pass it.
 */
import type { BenignVariant } from '../variant.js'

export const VARIANTS: readonly BenignVariant[] = [
  {
    name: 'wider-mime-table',
    choice:
      'More MIME types are accepted for an allowed extension: text/plain for .csv, .md, .markdown and .json, ' +
      'text/json for .json, application/vnd.ms-excel for .csv, image/pjpeg for .jpg and .jpeg. The document lists ' +
      'the allowed extensions and says "extension and MIME type must match" without giving the pair table.',
    patches: [
      {
        file: 'mock/domain/file-rules.ts',
        find: "  md: ['text/markdown', 'text/x-markdown'],\n  markdown:",
        replace: "  md: ['text/markdown', 'text/x-markdown', 'text/plain'],\n  markdown:",
      },
      {
        file: 'mock/domain/file-rules.ts',
        find: "  markdown: ['text/markdown', 'text/x-markdown'],",
        replace: "  markdown: ['text/markdown', 'text/x-markdown', 'text/plain'],",
      },
      {
        file: 'mock/domain/file-rules.ts',
        find: "  csv: ['text/csv'],\n  json: ['application/json'],",
        replace:
          "  csv: ['text/csv', 'text/plain', 'application/vnd.ms-excel'],\n  json: ['application/json', 'text/json', 'text/plain'],",
      },
      {
        file: 'mock/domain/file-rules.ts',
        find: "  jpg: ['image/jpeg'],\n  jpeg: ['image/jpeg'],",
        replace: "  jpg: ['image/jpeg', 'image/pjpeg'],\n  jpeg: ['image/jpeg', 'image/pjpeg'],",
      },
    ],
    select: ['FILE', 'SIZE-009', 'SIZE-010', 'ERR-047', 'ERR-022'],
    assumptions: ['the extension to MIME type pair table (not shown)'],
  },
  {
    name: 'webhook-secret-field-signing-secret',
    choice:
      'A registration and a rotation answer the secret under the field signing_secret, not secret. The document: ' +
      'registration "returns the server-generated secret once", rotation "rotate the secret"; the answers\' fields ' +
      'are not shown ("Fields of webhook endpoint ... records beyond url, event_types, status and delivery ' +
      'identifiers: not shown").',
    patches: [
      {
        file: 'mock/routes/webhooks.ts',
        find: 'return { status: 201, body: { ...endpointView(endpoint), secret: endpoint.secret } }',
        replace:
          'return { status: 201, body: { ...endpointView(endpoint), signing_secret: endpoint.secret } as never }',
      },
      {
        file: 'mock/routes/webhooks.ts',
        find: '          secret: rotated.secret,\n',
        replace: '          signing_secret: rotated.secret,\n',
      },
    ],
    select: ['WHM'],
    assumptions: ['WebhookEndpointCreated.secret (x-assumed field name)'],
  },
  {
    name: 'webhook-registration-200',
    choice:
      'A webhook registration answers 200 with the endpoint, not 201. The document gives the management ' +
      'operation no status ("register endpoint ... returns the secret once"); its status table fixes 201 only for ' +
      'a file upload ("200, 201 success; reads and close are 200, file upload is 201").',
    patches: [
      {
        file: 'mock/routes/webhooks.ts',
        find: 'return { status: 201, body: { ...endpointView(endpoint), secret: endpoint.secret } }',
        replace:
          'return { status: 200 as 201, body: { ...endpointView(endpoint), secret: endpoint.secret } }',
      },
    ],
    select: ['WHM'],
    assumptions: ['createWebhookEndpoint 201 (x-assumed status)'],
  },
  {
    name: 'webhook-refusal-400',
    choice:
      'A refused webhook registration (an address that is not HTTPS, the 11th endpoint) is 400 INVALID_INPUT, ' +
      'not 422. The document: INVALID_INPUT is "400, 422"; the code of the endpoint limit is not shown.',
    patches: [
      {
        file: 'mock/routes/webhooks.ts',
        find: "  return new ApiError('INVALID_INPUT', {\n    status: 422,\n    message: `A Project has at most",
        replace:
          "  return new ApiError('INVALID_INPUT', {\n    status: 400,\n    message: `A Project has at most",
      },
      {
        file: 'mock/routes/webhooks.ts',
        find: "  new ApiError('INVALID_INPUT', {\n    status: 422,\n    message: 'The webhook address must be a public HTTPS address.',",
        replace:
          "  new ApiError('INVALID_INPUT', {\n    status: 400,\n    message: 'The webhook address must be a public HTTPS address.',",
      },
    ],
    select: ['WHM-001', 'WHM-003'],
    assumptions: ['the code and status of the endpoint-limit refusal (assumed INVALID_INPUT 422)'],
  },
  {
    name: 'foreign-not-found-message',
    choice:
      'A Deployment of another Project, or one the key may not call, answers 404 NOT_FOUND with another message ' +
      'than an absent id. The document: "a resource outside the key\'s access: 404 NOT_FOUND (existence not ' +
      'revealed)"; "Branch on code, not on message (message is English text and may change)".',
    patches: [
      {
        file: 'mock/access/access.ts',
        find: "  if (!deployment || deployment.project_id !== grant.projectId || !grant.deploymentIds.includes(id))\n    throw new ApiError('NOT_FOUND', { message: 'No such Deployment.' })",
        replace:
          "  if (!deployment) throw new ApiError('NOT_FOUND', { message: 'No such Deployment.' })\n  if (deployment.project_id !== grant.projectId || !grant.deploymentIds.includes(id))\n    throw new ApiError('NOT_FOUND', { message: 'The Deployment was not found for this key.' })",
      },
    ],
    select: ['SVC-002', 'AUTH-009', 'AUTH-003', 'DEP-009'],
    assumptions: [
      'the message of NOT_FOUND (not shown; equal for a foreign and an absent id on the mock)',
    ],
  },
  {
    name: 'http-error-400-for-method',
    choice:
      "A method the path does not have is answered HTTP_ERROR with 400 instead of 405. The document's catalog: " +
      'HTTP_ERROR "4xx ... routing-level rejection (path or method mismatch)".',
    patches: [
      {
        file: 'mock/app.ts',
        find: "        new ApiError('HTTP_ERROR', {\n          status: 405,",
        replace: "        new ApiError('HTTP_ERROR', {\n          status: 400,",
      },
    ],
    select: ['ERR-027', 'ERR-001', 'ERR-005', 'ERR-007'],
    assumptions: ['HTTP_ERROR status 405 for a method mismatch'],
  },
  {
    name: 'http-error-400-for-path',
    choice:
      'An unknown path is answered HTTP_ERROR with 400 instead of 404. The document\'s catalog: HTTP_ERROR "4xx ' +
      '... routing-level rejection (path or method mismatch)".',
    patches: [
      {
        file: 'mock/app.ts',
        find: "    return errorResponse(c, new ApiError('HTTP_ERROR', { status: 404, message: 'no such path' }))",
        replace:
          "    return errorResponse(c, new ApiError('HTTP_ERROR', { status: 400, message: 'no such path' }))",
      },
    ],
    select: ['ERR-027', 'ERR-001', 'ERR-005', 'ERR-007'],
    assumptions: ['HTTP_ERROR status 404 for an unknown path'],
  },
  {
    name: 'usage-categories-list',
    choice:
      'GET /v1/usage gives categories as a list of {name, status, total_su, settled_su, reserved_su}, not a map by ' +
      'name. The document names categories and the CostCategoryUsage fields; "Full usage field set: not shown" ' +
      '(the map is x-assumed).',
    patches: [
      {
        file: 'mock/routes/usage.ts',
        find: '    categories,\n    // USAGE-004',
        replace:
          '    categories: Object.entries(categories).map(([name, c]) => ({ name, ...c })) as never,\n    // USAGE-004',
      },
    ],
    select: ['USAGE', 'RES-004'],
    assumptions: ['UsageResponse.categories (x-assumed: a map by name)'],
  },
  {
    name: 'usage-preparations-null-without-any',
    choice:
      'GET /v1/usage without a filter answers preparations null while the Project has no work preparation. The ' +
      'document: "preparations field (null when filtered by deployment_id, session_id, turn_id or run_id)"; its ' +
      'structure is not shown, nor that it is never null unfiltered.',
    patches: [
      {
        file: 'mock/routes/usage.ts',
        find: '    preparations: filtered ? null : preparationsUsage(deps, projectId),',
        replace:
          '    preparations: filtered\n      ? null\n      : ((p) => (p.count === 0 ? null : p))(preparationsUsage(deps, projectId)),',
      },
    ],
    select: ['USAGE', 'AUTH-005'],
    assumptions: ['UsageResponse.preparations unfiltered (not shown)'],
  },
  {
    name: 'file-count-after-existence',
    choice:
      "A Turn input of 21 file ids is checked for the files' existence before their count: unknown ids answer " +
      '404 NOT_FOUND, known ones over 20 (or one listed twice) 422 TOO_MANY_FILES. The document gives both rules ' +
      'and does not say which check comes first.',
    patches: [
      {
        file: 'mock/execution/accept.ts',
        find: "  if (files.length > 20 || new Set(files).size !== files.length) {\n    throw new ApiError('TOO_MANY_FILES', { message: 'At most 20 input files, none listed twice.' })\n  }\n",
        replace: '',
      },
      {
        file: 'mock/execution/accept.ts',
        find: '    if (!usable.ok) throw inputFileError(usable, fileId, `Input file ${fileId}`)\n  }\n  const load = projectLoad(deps.db, auth.projectId)',
        replace:
          "    if (!usable.ok) throw inputFileError(usable, fileId, `Input file ${fileId}`)\n  }\n  if (files.length > 20 || new Set(files).size !== files.length) {\n    throw new ApiError('TOO_MANY_FILES', { message: 'At most 20 input files, none listed twice.' })\n  }\n  const load = projectLoad(deps.db, auth.projectId)",
      },
    ],
    select: ['SIZE-008', 'ERR-053', 'SES-006', 'FILE-009'],
    assumptions: ['the order of the file-count and file-existence checks (not shown)'],
  },
  {
    name: 'non-ascii-idempotency-key-refused',
    choice:
      'An Idempotency-Key holding bytes outside visible ASCII is refused with 422 INVALID_IDEMPOTENCY_KEY. The ' +
      'document: "Idempotency-Key 1 to 256 bytes"; which bytes a key may hold is not shown.',
    patches: [
      {
        file: 'mock/middleware/validate.ts',
        find: '    if (key === undefined || bytes < 1 || bytes > 256) {',
        replace:
          '    if (key === undefined || bytes < 1 || bytes > 256 || /[^\\x21-\\x7e]/.test(key)) {',
      },
    ],
    select: ['SIZE-003', 'IDEM', 'EP-006', 'ERR-040'],
    assumptions: ['the bytes an Idempotency-Key may hold (not shown)'],
  },
  {
    name: 'json-depth-root-not-counted',
    choice:
      'Run input depth is counted without the outermost container ({} is depth 0), so one level more is accepted ' +
      'than the mock accepts. The document: "Input over JSON limits (depth 16, ...)": how depth is counted is not ' +
      'shown.',
    patches: [
      {
        file: 'mock/domain/json-limits.ts',
        find: "    if (here > JSON_MAX_DEPTH) over ??= 'DEPTH'",
        replace: "    if (here > JSON_MAX_DEPTH + 1) over ??= 'DEPTH'",
      },
    ],
    select: ['RUN-026', 'ERR-051'],
    assumptions: ['how JSON depth is counted (not shown)'],
  },
  {
    name: 'management-api-key-403',
    choice:
      'An API key on a management path is answered 403 INSUFFICIENT_SCOPE, not 401 INVALID_API_KEY. The ' +
      'document: the management API "is authenticated with the owner\'s login token ... and cannot be used with an ' +
      'API key"; the code is not shown.',
    patches: [
      {
        file: 'mock/middleware/owner-token.ts',
        find: "    if (!project)\n      throw new ApiError('INVALID_API_KEY', {",
        replace:
          "    if (!project)\n      throw new ApiError(token === undefined ? 'INVALID_API_KEY' : 'INSUFFICIENT_SCOPE', {",
      },
    ],
    select: ['AUTH-011'],
    assumptions: ['the code of an API key on a management path (x-assumed INVALID_API_KEY)'],
  },
]
