/**
 * The document-only view of the contract (support/document-view.ts) and the response checks that use it on a
 * real target (issue #35). Both ways: the full view (the mock, in this process or over HTTP) refuses what the
 * mock must never send, and the document view accepts what the document allows a real deployment (an error
 * code, content kind or event type added after 1.3.0, another choice where spec/openapi.yaml is x-assumed, a
 * proxy's bare 502) while it still refuses the real mistakes (a catalog code at the wrong status, a missing
 * required field, a bare 500). No target: the checks run on responses built here, each with its kind.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { ERROR_CATALOG, loadOpenApi } from '../../spec/index.js'
import { documentView, relaxSchema } from '../support/document-view.js'
import {
  allOperations,
  bodySchemaPointer,
  envTargetKind,
  envView,
  findOperation,
  validatorAt,
  viewFor,
  type ContractView,
} from '../support/operations.js'
import { req } from '../support/req.js'
import type { Target } from '../support/target.js'
import { clearWarnings, warnings } from '../support/warnings.js'
import { runChecks, type CheckContext, type CheckedResponse } from './index.js'

type Kind = Target['kind']
const MOCKS: readonly Kind[] = ['in-process', 'mock-http']
const KINDS: readonly Kind[] = [...MOCKS, 'real']

const REQUEST_ID = 'req-dv-1'
const jsonHeaders = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'x-request-id': REQUEST_ID,
  'cache-control': 'no-store',
  ...extra,
})

/** A JSON answer to `method path`, checked as the target of `kind` would be (strict on the mock). */
function answer(method: string, path: string, status: number, body: unknown, kind: Kind) {
  const ctx: CheckContext = {
    method,
    path,
    operation: findOperation(method, path),
    response: { status, headers: jsonHeaders(), body, text: JSON.stringify(body) },
    kind,
    strict: kind !== 'real',
  }
  expect(ctx.operation, `${method} ${path} is a documented operation`).toBeDefined()
  return () => runChecks(ctx)
}

/** A non-JSON answer without the service's headers, as a proxy sends it. */
function bare(status: number, kind: Kind, method = 'GET', path = `/v1/runs/${randomUUID()}`) {
  const response: CheckedResponse = {
    status,
    headers: { 'content-type': 'text/html' },
    body: undefined,
    text: '<html>gateway</html>',
  }
  return () => runChecks({ method, path, operation: findOperation(method, path), response, kind })
}

const envelope = (code: string, retryable: boolean, details: Record<string, unknown> = {}) => ({
  error: { code, message: 'x', retryable, request_id: REQUEST_ID, details },
})

const at = (pointer: string, view: ContractView) => validatorAt(pointer, view)
const schema = (name: string, view: ContractView) => at(`#/components/schemas/${name}`, view)

const sessionId = randomUUID()
const turnId = randomUUID()
const itemsPath = `/v1/sessions/${sessionId}/items`
const turnPath = `/v1/sessions/${sessionId}/turns/${turnId}`

const item = (content: Record<string, unknown>) => ({
  id: randomUUID(),
  session_id: sessionId,
  turn_id: turnId,
  sequence: 1,
  created_at: '2026-10-01T00:00:00Z',
  content,
})
const page = (...contents: Record<string, unknown>[]) => ({
  items: contents.map(item),
  next_cursor: null,
})

const turn = (extra: Record<string, unknown> = {}) => ({
  id: turnId,
  session_id: sessionId,
  status: 'FAILED',
  usage: { status: 'FINAL', total_su: 1 },
  error: { code: 'EXECUTION_FAILED', message: 'x', retryable: false, details: {} },
  created_at: '2026-10-01T00:00:00Z',
  started_at: '2026-10-01T00:00:01Z',
  completed_at: '2026-10-01T00:00:02Z',
  outputs: [],
  next_cursor: null,
  ...extra,
})

const warningKeys = () => warnings().map((w) => w.key)

afterEach(() => {
  clearWarnings()
})

describe('the document view of spec/openapi.yaml', () => {
  it(`${req('VER-003')} is the view of a real target only; the mock keeps the full view`, () => {
    expect(viewFor('real')).toBe('document')
    expect(viewFor('in-process')).toBe('full')
    expect(viewFor('mock-http')).toBe('full')
    expect(envView({})).toBe('full')
    expect(envView({ TARGET_URL: 'http://127.0.0.1:3000' })).toBe('full')
    expect(envView({ TARGET_URL: 'https://api.example.com', TARGET_API_KEY: 'k' })).toBe('document')
    // The mock dressed as a real deployment (benign variants, real-mode mutants) is judged as one.
    expect(envTargetKind({ CONFORMANCE_REHEARSAL: 'real' })).toBe('real')
    expect(envView({ CONFORMANCE_REHEARSAL: 'real' })).toBe('document')
  })

  it(`${req('VER-003')} relaxes x-assumed to {}, keeps the frame of x-not-shown, opens the catalog enum and closed objects`, () => {
    const codes = Object.keys(ERROR_CATALOG)
    const source = {
      type: 'object',
      additionalProperties: false,
      required: ['assumed', 'open'],
      properties: {
        assumed: { type: 'string', enum: ['X'], 'x-assumed': true },
        open: {
          'x-not-shown': true,
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, mine: { type: 'integer', 'x-assumed': true } },
          additionalProperties: false,
          maxProperties: 3,
        },
        code: { type: 'string', enum: codes },
        status: { type: 'string', enum: ['CANCELED', 'FAILED'] },
      },
    }
    const copy = structuredClone(source)
    expect(relaxSchema(source)).toEqual({
      type: 'object',
      required: ['assumed', 'open'],
      properties: {
        assumed: {},
        open: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, mine: {} },
        },
        code: { type: 'string' },
        status: { type: 'string', enum: ['CANCELED', 'FAILED'] },
      },
    })
    expect(source).toEqual(copy)
  })

  it(`${req('VER-003')} is derived from the parsed document without changing it, and every response body schema compiles in both views`, () => {
    const doc = loadOpenApi()
    const before = JSON.stringify(doc)
    const view = documentView(doc)
    expect(JSON.stringify(doc)).toBe(before)
    expect(view.components.schemas!.ErrorCode).toMatchObject({ type: 'string' })
    expect(view.components.schemas!.ErrorCode).not.toHaveProperty('enum')
    expect((doc.components.schemas!.ErrorCode as { enum: string[] }).enum).toEqual(
      Object.keys(ERROR_CATALOG),
    )
    let compiled = 0
    for (const op of allOperations()) {
      for (const status of Object.keys(op.responses)) {
        const pointer = bodySchemaPointer(`${op.pointer}/responses/${status}`, 'application/json')
        if (!pointer) continue
        for (const v of ['full', 'document'] as const)
          expect(typeof at(pointer, v)).toBe('function')
        compiled++
      }
    }
    expect(compiled).toBeGreaterThan(300)
  })

  it(`${req('ERR-012', 'VER-003')} opens the error codes of envelopes, execution details and output items (not the output types); the full view keeps the catalog`, () => {
    const unknown = envelope('CAPACITY_REBALANCING', true)
    expect(schema('ErrorEnvelope', 'full')(unknown)).toBe(false)
    expect(schema('ErrorEnvelope', 'document')(unknown)).toBe(true)
    const failed = turn({ error: { code: 'NEW_FAILURE_KIND' } })
    expect(schema('Turn', 'full')(failed)).toBe(false)
    expect(schema('Turn', 'document')(failed)).toBe(true)
    expect(schema('Turn', 'document')(turn())).toBe(true)
    const output = {
      id: 'o1',
      key: 'summary',
      type: 'TEXT',
      visibility: 'FINAL',
      availability: 'READY',
      error: { code: 'NEW_RESULT_RULE', retryable: false },
      text: 'x',
    }
    expect(schema('Turn', 'full')(turn({ outputs: [output] }))).toBe(false)
    expect(schema('Turn', 'document')(turn({ outputs: [output] }))).toBe(true)
    // Output types stay the document's four.
    const other = { ...output, type: 'AUDIO', error: null }
    expect(schema('Turn', 'document')(turn({ outputs: [other] }))).toBe(false)
  })

  it(`${req('ERR-001')} still refuses a malformed envelope and an execution error without code in the document view`, () => {
    const { retryable: _dropped, ...noRetryable } = envelope('CAPACITY_REBALANCING', true).error
    for (const view of ['full', 'document'] as const) {
      expect(schema('ErrorEnvelope', view)({ error: noRetryable })).toBe(false)
      expect(schema('ErrorEnvelope', view)(envelope('NOT_FOUND', false))).toBe(true)
      expect(schema('ErrorEnvelope', view)({ error: { ...noRetryable, retryable: 'no' } })).toBe(
        false,
      )
      expect(schema('Turn', view)(turn({ error: { message: 'no code' } }))).toBe(false)
    }
  })

  it(`${req('ITEM-003', 'VER-003')} accepts a Session item of a content kind added after 1.3.0 only in the document view`, () => {
    const body = page({ kind: 'MESSAGE', text: 'hi', visibility: 'FINAL' }, { kind: 'INSIGHT' })
    const pointer = '#/components/schemas/ItemPage'
    expect(at(pointer, 'full')(body)).toBe(false)
    expect(at(pointer, 'document')(body)).toBe(true)
  })

  it(`${req('ITEM-002', 'ITEM-003')} still refuses in the document view an item without kind, a known kind without its fields, a missing envelope field`, () => {
    const pointer = '#/components/schemas/ItemPage'
    for (const view of ['full', 'document'] as const) {
      expect(at(pointer, view)(page({ kind: 'MESSAGE', text: 'hi' }))).toBe(true)
      expect(at(pointer, view)(page({ text: 'no kind' }))).toBe(false)
      expect(at(pointer, view)(page({ kind: 'MESSAGE' }))).toBe(false)
      expect(at(pointer, view)(page({ kind: 'OUTCOME', status: 'SUCCEEDED' }))).toBe(false)
      const { sequence: _dropped, ...noSequence } = item({ kind: 'MESSAGE', text: 'hi' })
      expect(at(pointer, view)({ items: [noSequence], next_cursor: null })).toBe(false)
    }
  })

  it(`${req('SSE-006', 'VER-003')} types event types as open strings in both views and still requires data.kind`, () => {
    const event = {
      event_id: randomUUID(),
      aggregate_kind: 'SESSION',
      aggregate_id: sessionId,
      sequence: 7,
      type: 'turn.insight',
      created_at: '2026-10-01T00:00:00Z',
      data: { kind: 'INSIGHT', note: 'new in 1.4' },
    }
    const notice = {
      event_id: randomUUID(),
      type: 'turn.insight',
      aggregate_kind: 'SESSION',
      sequence: 7,
      occurred_at: '2026-10-01T00:00:00Z',
      status: 'RUNNING',
    }
    for (const view of ['full', 'document'] as const) {
      expect(schema('Event', view)(event)).toBe(true)
      expect(schema('WebhookNotification', view)(notice)).toBe(true)
      expect(schema('Event', view)({ ...event, data: { note: 'no kind' } })).toBe(false)
      expect(schema('Event', view)({ ...event, sequence: 'seven' })).toBe(false)
    }
  })
})

describe('response checks on a real target (document view) and on the mock (full view)', () => {
  it(`${req('ERR-012', 'VER-003')} passes a Turn whose execution error has a code added after 1.3.0, with a warning, only on a real target`, () => {
    const body = turn({
      error: { code: 'NEW_FAILURE_KIND', message: 'x', retryable: false, details: {} },
    })
    for (const kind of MOCKS)
      expect(answer('GET', turnPath, 200, body, kind)).toThrow(/response_schema_conformance/)
    expect(warnings()).toEqual([])
    expect(answer('GET', turnPath, 200, body, 'real')).not.toThrow()
    expect(
      warnings()
        .map((w) => w.message)
        .join('\n'),
    ).toMatch(/getTurn 200: the body is valid by the document but not by the mock's full contract/)
  })

  it(`${req('ITEM-003', 'VER-003')} passes Session items of an unknown content kind, with a warning, only on a real target`, () => {
    const body = page({ kind: 'INSIGHT', note: 'x' })
    for (const kind of MOCKS)
      expect(answer('GET', itemsPath, 200, body, kind)).toThrow(/response_schema_conformance/)
    expect(answer('GET', itemsPath, 200, body, 'real')).not.toThrow()
    expect(warningKeys().some((k) => k.startsWith('document view listSessionItems 200'))).toBe(true)
  })

  it(`${req('FILE-003')} fails an ArtifactDetail without sha256 on every target`, () => {
    const artifactPath = `/v1/artifacts/${randomUUID()}`
    const detail = {
      id: randomUUID(),
      file_id: randomUUID(),
      status: 'READY',
      filename: 'a.txt',
      mime_type: 'text/plain',
      size_bytes: 1,
      sha256: 'a'.repeat(64),
      expires_at: '2026-11-01T00:00:00Z',
    }
    const { sha256: _dropped, ...broken } = detail
    for (const kind of KINDS) {
      expect(answer('GET', artifactPath, 200, detail, kind)).not.toThrow()
      expect(answer('GET', artifactPath, 200, broken, kind)).toThrow(
        /response_schema_conformance.*sha256/,
      )
    }
  })

  it(`${req('STATE-008', 'STATE-011')} holds the mock to its cancel answer (the full Run read) but not a real target (x-assumed)`, () => {
    const cancelPath = `/v1/runs/${randomUUID()}/cancel`
    const minimal = { run_id: randomUUID(), status: 'CANCEL_REQUESTED' }
    for (const kind of MOCKS)
      expect(answer('POST', cancelPath, 202, minimal, kind)).toThrow(/response_schema_conformance/)
    expect(answer('POST', cancelPath, 202, minimal, 'real')).not.toThrow()
    expect(answer('POST', cancelPath, 200, minimal, 'real')).not.toThrow()
    // The statuses are the document's: a cancel is still never a 201.
    expect(answer('POST', cancelPath, 201, minimal, 'real')).toThrow(/status_code_conformance/)
  })

  it(`${req('USAGE-002')} frees the shape of usage categories (x-assumed) on a real target but still requires the field`, () => {
    const usage = { status: 'FINAL', total_su: 2, preparations: null }
    const asList = { ...usage, categories: [{ name: 'model', total_su: 2 }] }
    for (const kind of MOCKS)
      expect(answer('GET', '/v1/usage', 200, asList, kind)).toThrow(/response_schema_conformance/)
    expect(answer('GET', '/v1/usage', 200, asList, 'real')).not.toThrow()
    for (const kind of KINDS)
      expect(answer('GET', '/v1/usage', 200, usage, kind)).toThrow(/categories/)
  })
})

describe('a proxy answer and server errors', () => {
  it(`${req('RETRY-006')} passes a bare 502, 503 or 504 (a proxy's, retry rule 5) on every target, with a warning on a real one`, () => {
    for (const status of [502, 503, 504])
      for (const kind of MOCKS) expect(bare(status, kind)).not.toThrow()
    expect(warnings()).toEqual([])
    for (const status of [502, 503, 504]) expect(bare(status, 'real')).not.toThrow()
    expect(warningKeys().filter((k) => k.startsWith('proxy answer getRun'))).toHaveLength(3)
    // A gateway's JSON without the envelope is a proxy's on a real target, a fault of the mock.
    const gateway = { message: 'Service Unavailable' }
    const runPath = `/v1/runs/${randomUUID()}`
    expect(answer('GET', runPath, 503, gateway, 'real')).not.toThrow()
    for (const kind of MOCKS)
      expect(answer('GET', runPath, 503, gateway, kind)).toThrow(/not_a_server_error/)
  })

  it(`${req('ERR-092', 'ERR-025')} fails a bare 500, an INTERNAL_ERROR and a catalog code at a 5xx the catalog does not give it, on every target`, () => {
    const runPath = `/v1/runs/${randomUUID()}`
    for (const kind of KINDS) {
      expect(bare(500, kind)).toThrow(/not_a_server_error.*server error 500/)
      expect(answer('GET', runPath, 500, envelope('INTERNAL_ERROR', false), kind)).toThrow(
        /not_a_server_error.*INTERNAL_ERROR/,
      )
      expect(answer('GET', runPath, 500, envelope('BILLING_UNAVAILABLE', true), kind)).toThrow(
        /not_a_server_error/,
      )
      expect(answer('GET', runPath, 503, envelope('BILLING_UNAVAILABLE', true), kind)).not.toThrow()
    }
  })

  it(`${req('ERR-012', 'ERR-025')} passes a 503 with a code added after 1.3.0 on a real target (a warning), fails it on the mock and at 500`, () => {
    const runPath = `/v1/runs/${randomUUID()}`
    const body = envelope('CAPACITY_REBALANCING', true)
    for (const kind of MOCKS)
      expect(answer('GET', runPath, 503, body, kind)).toThrow(/not_a_server_error/)
    expect(answer('GET', runPath, 503, body, 'real')).not.toThrow()
    expect(warningKeys()).toEqual(
      expect.arrayContaining([
        'unknown server-side code CAPACITY_REBALANCING 503',
        'unknown error code CAPACITY_REBALANCING 503',
      ]),
    )
    expect(answer('GET', runPath, 500, body, 'real')).toThrow(/not_a_server_error/)
    expect(answer('GET', runPath, 502, body, 'real')).toThrow(/not_a_server_error/)
  })
})

describe('operation status lists', () => {
  it(`${req('BUD-008', 'ERR-079')} documents 402 MINIMUM_SU_REQUIRED on both download operations`, () => {
    const artifactId = randomUUID()
    const body = envelope('MINIMUM_SU_REQUIRED', false)
    for (const kind of KINDS) {
      expect(
        answer('GET', `/v1/artifacts/${artifactId}/content?token=t`, 402, body, kind),
      ).not.toThrow()
      expect(answer('POST', `/v1/artifacts/${artifactId}/download`, 402, body, kind)).not.toThrow()
    }
    expect(warnings()).toEqual([])
  })

  it(`${req('RET-013', 'ERR-055', 'ERR-067')} documents 410 on expired content: the download address read and the Session delete`, () => {
    for (const kind of MOCKS) {
      expect(
        answer(
          'GET',
          `/v1/artifacts/${randomUUID()}/content?token=t`,
          410,
          envelope('ARTIFACT_EXPIRED', false),
          kind,
        ),
      ).not.toThrow()
      expect(
        answer(
          'DELETE',
          `/v1/sessions/${sessionId}`,
          410,
          envelope('SESSION_EXPIRED', false),
          kind,
        ),
      ).not.toThrow()
    }
  })

  it(`${req('RUN-037', 'ERR-075')} documents 409 WORKFLOW_MANAGED_SESSION on every Session path, the Turn outputs list too`, () => {
    const body = envelope('WORKFLOW_MANAGED_SESSION', false)
    const sessionPaths = allOperations().filter((o) => o.template.startsWith('/v1/sessions/'))
    expect(sessionPaths.length).toBeGreaterThan(5)
    for (const op of sessionPaths) expect(Object.keys(op.responses)).toContain('409')
    for (const kind of MOCKS)
      expect(answer('GET', `${turnPath}/outputs`, 409, body, kind)).not.toThrow()
  })

  it(`${req('ERR-073', 'ERR-020')} accepts on a real target an undocumented error status that the catalog gives the code (a warning); the mock fails it`, () => {
    const deploymentPath = `/v1/deployments/${randomUUID()}`
    const body = envelope('DEPLOYMENT_UNAVAILABLE', false)
    for (const kind of MOCKS)
      expect(answer('GET', deploymentPath, 409, body, kind)).toThrow(
        /status_code_conformance.*status 409 is not documented/,
      )
    expect(warnings()).toEqual([])
    expect(answer('GET', deploymentPath, 409, body, 'real')).not.toThrow()
    expect(warningKeys()).toEqual(['undocumented status getDeployment 409 DEPLOYMENT_UNAVAILABLE'])
  })

  it(`${req('ERR-026', 'ERR-012')} still fails on a real target an undocumented status with another status's code, an unknown code, or a success status`, () => {
    const deploymentPath = `/v1/deployments/${randomUUID()}`
    const real = (status: number, body: unknown) =>
      answer('GET', deploymentPath, status, body, 'real')
    expect(real(409, envelope('NOT_FOUND', false))).toThrow(/status_code_conformance/)
    expect(real(409, envelope('NEW_CONFLICT', false))).toThrow(/status_code_conformance/)
    expect(real(409, { error: { code: 'DEPLOYMENT_UNAVAILABLE' } })).toThrow(
      /status_code_conformance/,
    )
    expect(real(201, { id: randomUUID() })).toThrow(/status_code_conformance/)
  })

  it(`${req('WHM-002')} accepts on a real target another 2xx where the mock's success status is x-assumed (webhook registration), never on the mock`, () => {
    const webhooksPath = `/api/runtime/projects/${randomUUID()}/webhooks`
    const created = {
      id: randomUUID(),
      url: 'https://hooks.example.com/x',
      event_types: ['turn.completed'],
      status: 'ACTIVE',
      secret: 's3cret',
    }
    for (const kind of KINDS) expect(answer('POST', webhooksPath, 201, created, kind)).not.toThrow()
    for (const kind of MOCKS)
      expect(answer('POST', webhooksPath, 200, created, kind)).toThrow(
        /status_code_conformance.*status 200 is not documented/,
      )
    expect(warnings()).toEqual([])
    expect(answer('POST', webhooksPath, 200, created, 'real')).not.toThrow()
    expect(warningKeys()).toContain('assumed success status createWebhookEndpoint 200')
    // Not a redirect, and not where the document gives the status (a file upload is 201).
    expect(answer('POST', webhooksPath, 302, created, 'real')).toThrow(/status_code_conformance/)
    const receipt = {
      file_id: randomUUID(),
      status: 'READY',
      filename: 'a.txt',
      mime_type: 'text/plain',
      size_bytes: 1,
      sha256: 'a'.repeat(64),
      expires_at: '2026-11-01T00:00:00Z',
    }
    expect(answer('POST', '/v1/files', 201, receipt, 'real')).not.toThrow()
    expect(answer('POST', '/v1/files', 200, receipt, 'real')).toThrow(/status_code_conformance/)
  })
})
