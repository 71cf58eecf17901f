/**
 * The generated types (spec/generated/openapi.ts) as a client writes request bodies: what the document makes
 * optional (fields with a default, such as ExecutionLimits' execution_seconds, max_su and queue_seconds) is
 * optional in the types. Type-level: `npm run typecheck` fails when a body below stops compiling, or when a
 * @ts-expect-error line starts compiling; the runtime assertions check the bodies against the OpenAPI schemas.
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { components } from '../../spec/index.js'
import { req } from '../support/req.js'
import { specAjv } from '../support/operations.js'

type Schemas = components['schemas']

const sessionBody: Schemas['SessionCreateInput'] = {
  input: [{ type: 'TEXT', text: 'Summarise the report.' }],
  limits: { max_su: 1 },
}
const turnLimits: Schemas['ExecutionLimits'] = { execution_seconds: 60 }
const noLimits: Schemas['ExecutionLimits'] = {}
const runBody: Schemas['RunCreateInput'] = {
  published_version: 3,
  input: { order_id: 'A-1042' },
  limits: { max_su: 20, retention_days: 7 },
}
// @ts-expect-error max_su is a number
const wrongType: Schemas['ExecutionLimits'] = { max_su: 'one' }
// @ts-expect-error undeclared fields are refused
const undeclared: Schemas['ExecutionLimits'] = { max_tokens: 5 }
// @ts-expect-error published_version is required
const noVersion: Schemas['RunCreateInput'] = { input: {} }

describe('generated request types', () => {
  it(`${req('SES-012')} lets a client write limits with only the fields it sets (the rest have defaults)`, () => {
    expectTypeOf<Schemas['ExecutionLimits']>().toEqualTypeOf<{
      execution_seconds?: number
      max_su?: number
      queue_seconds?: number
    }>()
    const valid = (name: string, value: unknown) =>
      specAjv.at(`#/components/schemas/${name}`)(value)
    expect(valid('SessionCreateInput', sessionBody)).toBe(true)
    expect(valid('ExecutionLimits', turnLimits)).toBe(true)
    expect(valid('ExecutionLimits', noLimits)).toBe(true)
    expect(valid('RunCreateInput', runBody)).toBe(true)
    expect(valid('ExecutionLimits', wrongType)).toBe(false)
    expect(valid('ExecutionLimits', undeclared)).toBe(false)
    expect(valid('RunCreateInput', noVersion)).toBe(false)
  })
})
