/**
 * What public events may carry (Events, first paragraph; Data handling): only tool names, call ids, progress
 * phases, sanitized final messages, output references and outcomes. Property: for every built-in scenario and
 * any Turn input, each event's data has only documented keys of its content kind and never echoes the input.
 */
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { loadOpenApi } from '../../../spec/index.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import { mockOnly } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { newSession } from './flow.js'
import { closeAllStreams, eventOf, openRaw } from './sse-support.js'

const target = useTarget()
afterAll(() => {
  closeAllStreams()
})
afterEach(() => {
  closeAllStreams()
})

type Schema = { properties?: Record<string, unknown> }
const schemas = (loadOpenApi() as unknown as { components: { schemas: Record<string, Schema> } })
  .components.schemas
const propsOf = (name: string) => Object.keys(schemas[name]?.properties ?? {})

/**
 * Keys each content kind may hold: the schema's properties where the document shows them; for the kinds whose
 * fields are not shown, the words of the Events paragraph (progress phases, tool names and call ids) and the
 * mock's assumed names (marked x-not-shown in spec/openapi.yaml).
 */
const ALLOWED: Record<string, string[]> = {
  MESSAGE: propsOf('MessageContent'),
  OUTCOME: propsOf('OutcomeContent'),
  ARTIFACT: propsOf('ArtifactContent'),
  PROGRESS: ['kind', 'phase'],
  TOOL_CALL: ['kind', 'tool_name', 'call_id'],
  REQUIRED_ACTION: ['kind', 'action_id'],
  STEP_OUTCOME: ['kind', 'status', 'step_id'],
  USAGE: ['kind', 'status', 'total_su'],
}
/** OutputReference (fields not shown): which output, never its value or a download address. */
const OUTPUT_REFERENCE = ['id', 'key', 'type']
const OUTCOME_ERROR = ['code', 'message', 'retryable', 'details']

/** Built-in scenarios a Deployment can run (MOCK-CONTRACT), from the control API when it lists them. */
async function deploymentScenarios(): Promise<string[]> {
  const res = await target.api.get('/_mock/scenarios', { check: false })
  if (res.status === 200) {
    const body = res.body as { builtin: { name: string; applies_to: string[] }[] }
    return body.builtin.filter((s) => s.applies_to.includes('deployment')).map((s) => s.name)
  }
  return [
    'succeed',
    'slow',
    'fail',
    'json-output',
    'file-output',
    'url-output',
    'needs-action',
    'credential-leak',
    'over-budget',
  ]
}

describe('public event content', () => {
  it(`${req('EVT-002', 'SSE-006', 'ITEM-006')} every event of every built-in scenario carries only documented keys`, async (ctx) => {
    const control = mockOnly(ctx, target, 'queues scenarios and moves virtual time')
    const names = await deploymentScenarios()
    expect(names.length).toBeGreaterThan(0)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...names),
        fc.string({ maxLength: 40 }),
        async (scenario, noise) => {
          await control.queueScenario(target.world.deployments.active, scenario)
          // A marker standing for anything the caller gave the tools: it must never come back in an event.
          const marker = `ARG-${randomUUID()}`
          const receipt = await newSession(target, `${marker} ${noise} reach me at a@b.example`)
          const s = await openRaw(target.baseUrl, `/v1/sessions/${receipt.session_id}/events`, {
            key: target.world.keys.full,
          })
          expect(s.status).toBe(200)
          // Past every scenario's end, the `slow` one included (execution_seconds 3600).
          await control.advance(3700)
          await s.waitFor(
            (x) =>
              x
                .events()
                .some((f) => /^turn\.(completed|failed|canceled|expired)$/.test(f.event ?? '')),
            `the outcome of ${scenario}`,
          )
          s.close()
          for (const event of s.events().map(eventOf)) {
            const data = event.data
            expect(JSON.stringify(event)).not.toContain(marker)
            const allowed = ALLOWED[data.kind as string]
            expect(allowed, `content kind ${String(data.kind)}`).toBeDefined()
            for (const key of Object.keys(data))
              expect(allowed, `${scenario}: ${event.type as string} data.${key}`).toContain(key)
            if (data.kind === 'ARTIFACT')
              for (const key of Object.keys(data.output as object))
                expect(OUTPUT_REFERENCE, `output.${key}`).toContain(key)
            if (data.kind === 'OUTCOME' && data.error !== null)
              for (const key of Object.keys(data.error as object))
                expect(OUTCOME_ERROR, `error.${key}`).toContain(key)
          }
        },
      ),
      { ...fcParams({ numRuns: 15 }), examples: names.map((n) => [n, ''] as [string, string]) },
    )
  })
})
