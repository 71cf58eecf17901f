/**
 * Unit tests of the unknown_response_fields check and its strictness switch: a response with a field the
 * document does not name passes the checks with a warning when the suite is not strict, and fails when it is.
 * No target: the checks run on responses built here.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { findOperation } from '../support/operations.js'
import { req } from '../support/req.js'
import { isStrict, targetKindFromEnv } from '../support/strictness.js'
import {
  expectDocumentedFields,
  UNSETTLED_FIELDS,
  unknownFields,
} from '../support/unknown-fields.js'
import { clearWarnings, warnings } from '../support/warnings.js'
import { ConformanceFailure, runChecks, type CheckContext } from './index.js'
import { unknownResponseFields } from './unknown-response-fields.js'

const artifactId = randomUUID()
const path = `/v1/artifacts/${artifactId}`

/** A documented 200 ArtifactDetail, plus `extra` fields. */
function artifactResponse(extra: Record<string, unknown> = {}, strict?: boolean): CheckContext {
  const body = {
    id: artifactId,
    file_id: randomUUID(),
    status: 'READY',
    filename: 'report.txt',
    mime_type: 'text/plain',
    size_bytes: 17,
    sha256: 'a'.repeat(64),
    expires_at: '2026-11-01T00:00:00Z',
    ...extra,
  }
  return {
    method: 'GET',
    path,
    operation: findOperation('GET', path),
    response: {
      status: 200,
      headers: {
        'content-type': 'application/json',
        'x-request-id': 'req-unit-1',
        'cache-control': 'no-store',
      },
      body,
      text: JSON.stringify(body),
    },
    ...(strict === undefined ? {} : { strict }),
  }
}

afterEach(() => {
  clearWarnings()
})

describe('unknown response fields', () => {
  it('finds the documented operation of the test response', () => {
    expect(findOperation('GET', path)?.operationId).toBeDefined()
    expect(
      unknownFields('#/components/schemas/ArtifactDetail', artifactResponse().response.body),
    ).toEqual([])
  })

  it(`${req('VER-003')} passes a response with an undocumented field, with a warning, when not strict`, () => {
    expect(() => runChecks(artifactResponse({ preview_url: '/x' }, false))).not.toThrow()
    expect(warnings()).toHaveLength(1)
    expect(warnings()[0]!.message).toContain('preview_url')
    // Once per operation and field.
    runChecks(artifactResponse({ preview_url: '/y' }, false))
    expect(warnings()).toHaveLength(1)
  })

  it('fails a response with an undocumented field when strict', () => {
    const run = () => runChecks(artifactResponse({ preview_url: '/x' }, true))
    expect(run).toThrow(ConformanceFailure)
    expect(run).toThrow(/\[unknown_response_fields\].*preview_url.*req-unit-1/)
    expect(warnings()).toEqual([])
  })

  it('passes a documented response either way', () => {
    for (const strict of [true, false]) {
      expect(() => runChecks(artifactResponse({}, strict))).not.toThrow()
      expect(() => unknownResponseFields.run(artifactResponse({}, strict))).not.toThrow()
    }
    expect(warnings()).toEqual([])
  })

  it('follows $ref, oneOf branches and arrays, and leaves open objects and maps alone', () => {
    const output = {
      id: 'o1',
      key: 'summary',
      type: 'TEXT',
      visibility: 'FINAL',
      availability: 'READY',
      error: null,
      text: 'hello',
    }
    const detail = {
      run: {
        id: randomUUID(),
        workflow_id: randomUUID(),
        published_version: 1,
        status: 'SUCCEEDED',
        usage: { status: 'FINAL', total_su: 1.5, new_counter: 3 },
        error: { code: 'EXECUTION_FAILED', details: { anything: 1 }, surprise: true },
        metadata: { any_key: 'is a map entry' },
        created_at: '2026-10-01T00:00:00Z',
        progress: { total: 1, completed: 1 },
        required_actions: [{ shape: 'not shown' }],
        new_top: 1,
      },
      outputs: [output, { ...output, id: 'o2', extra: 'x' }],
      next_cursor: null,
      page_hint: 'x',
    }
    expect(unknownFields('#/components/schemas/RunDetail', detail).sort()).toEqual(
      ['outputs[].extra', 'page_hint', 'run.new_top', 'run.usage.new_counter'].sort(),
    )
  })

  it('fails, when strict, on any field the Workflow schema does not declare; id and name are declared (x-assumed)', () => {
    const workflowPath = `/v1/workflows/${randomUUID()}`
    const response = (extra: Record<string, unknown>): CheckContext => {
      const body = {
        published_version: 3,
        input_schema: { type: 'object' },
        outputs: [],
        available: true,
        limits: {},
        error: null,
        ...extra,
      }
      return {
        method: 'GET',
        path: workflowPath,
        operation: findOperation('GET', workflowPath),
        response: {
          status: 200,
          headers: {
            'content-type': 'application/json',
            'x-request-id': 'req-unit-2',
            'cache-control': 'no-store',
          },
          body,
          text: JSON.stringify(body),
        },
        strict: true,
      }
    }
    expect(Object.keys(UNSETTLED_FIELDS)).toEqual([])
    expect(() => runChecks(response({ id: randomUUID(), name: 'Report' }))).not.toThrow()
    expect(warnings()).toEqual([])
    expect(() => runChecks(response({ id: randomUUID(), name: 'Report', owner: 'x' }))).toThrow(
      /undocumented field\(s\) owner \(/,
    )
  })

  it('expectDocumentedFields fails when strict and warns when not', () => {
    const event = {
      event_id: randomUUID(),
      aggregate_kind: 'SESSION',
      aggregate_id: randomUUID(),
      sequence: 1,
      type: 'turn.progress',
      created_at: '2026-10-01T00:00:00Z',
      data: { kind: 'PROGRESS', phase: 'any: data payloads are not shown' },
      trace: 'x',
    }
    const schema = '#/components/schemas/Event'
    expect(() => expectDocumentedFields(schema, event, 'SSE event', true)).toThrow(/trace/)
    expect(() => expectDocumentedFields(schema, event, 'SSE event', false)).not.toThrow()
    expect(warnings().map((w) => w.key)).toEqual(['SSE event: trace'])
  })

  it('is strict against the mock and lenient against a real deployment unless CONFORMANCE_STRICT says', () => {
    const real = { TARGET_URL: 'https://api.example.com', TARGET_WORLD: 'world.json' }
    const mockHttp = { TARGET_URL: 'http://127.0.0.1:3000' }
    expect(targetKindFromEnv({})).toBe('in-process')
    expect(targetKindFromEnv(mockHttp)).toBe('mock-http')
    expect(targetKindFromEnv(real)).toBe('real')
    expect(isStrict({})).toBe(true)
    expect(isStrict(mockHttp)).toBe(true)
    expect(isStrict(real)).toBe(false)
    // The conformance CLI names a real target by the world it found (TARGET_WORLD_JSON), or by a key alone.
    const cliReal = { TARGET_URL: 'https://api.example.com', TARGET_WORLD_JSON: '{}' }
    expect(targetKindFromEnv(cliReal)).toBe('real')
    expect(isStrict(cliReal)).toBe(false)
    expect(targetKindFromEnv({ TARGET_URL: 'https://api.example.com', TARGET_API_KEY: 'k' })).toBe(
      'real',
    )
    expect(isStrict({ ...real, CONFORMANCE_STRICT: '1' })).toBe(true)
    expect(isStrict({ ...real, CONFORMANCE_STRICT: 'true' })).toBe(true)
    expect(isStrict({ CONFORMANCE_STRICT: '0' })).toBe(false)
    expect(() => isStrict({ CONFORMANCE_STRICT: 'yes' })).toThrow(/CONFORMANCE_STRICT/)
  })
})
