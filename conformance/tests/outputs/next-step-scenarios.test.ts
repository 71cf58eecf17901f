/**
 * Errors > Next step after a failed execution: every code of the document's table can be rehearsed by a
 * built-in scenario of the mock (README "Rehearsal recipes"), and the execution ends with that code in its
 * detail, retryable false, and the terminal status the document gives it (EXPIRED for the time limits,
 * CANCELED for a stop, else FAILED). Mock only: scenarios are the mock's control API.
 */
import { describe, expect, it } from 'vitest'
import { loadRequirements } from '../../../spec/index.js'
import { req } from '../../support/req.js'
import { readRun, startRun } from '../../support/runs.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

/** The document's table, code by code, with the scenario that rehearses it and how long it takes. */
const TABLE: [code: string, scenario: string, seconds?: number][] = [
  ['QUEUE_TIMEOUT', 'queue-timeout'],
  ['RECOVERY_EXHAUSTED', 'recovery-exhausted'],
  ['EXECUTION_FAILED', 'fail'],
  ['USAGE_PENDING', 'usage-pending'],
  ['ARTIFACT_PREPARATION_TIMEOUT', 'slow-file', 310],
  ['ARTIFACT_PREPARATION_FAILED', 'broken-file'],
  ['SESSION_SANDBOX_UNAVAILABLE', 'sandbox-unavailable'],
  ['EXECUTION_TIMEOUT', 'execution-timeout'],
  ['RUN_DEADLINE_EXCEEDED', 'run-deadline'],
  ['BUDGET_EXCEEDED', 'over-budget'],
  ['INSUFFICIENT_SU', 'insufficient-su'],
  ['OUTPUT_SCHEMA_MISMATCH', 'schema-mismatch'],
  ['OUTPUT_LIMIT_EXCEEDED', 'json-over-limit'],
  ['OUTPUT_MISSING', 'missing-output'],
  ['OUTPUT_PATH_DENIED', 'denied-path'],
  ['CAPABILITY_DENIED', 'capability-denied'],
  ['SESSION_RESOURCES_NOT_READY', 'resources-not-ready'],
  ['ACTION_REQUIRED_UNSUPPORTED', 'needs-action'],
  ['WORKFLOW_UNAVAILABLE', 'workflow-stopped'],
  ['OUTPUT_URL_INVALID', 'bad-url'],
  ['OUTPUT_CONTAINS_CREDENTIALS', 'credential-leak'],
  ['INVALID_FILENAME', 'bad-filename'],
  ['UNSUPPORTED_FILE_TYPE', 'bad-file-type'],
  ['AUTHORIZATION_REVOKED', 'authorization-revoked'],
  ['RUNTIME_CONTEXT_MISMATCH', 'context-mismatch'],
  ['EXTERNAL_EFFECT_UNKNOWN', 'external-effect-unknown'],
  ['CANCELED', 'canceled'],
  ['SESSION_DELETED', 'session-deleted'],
]

/** States and transitions: the terminal status each code comes with. */
const STATUS: Record<string, string> = {
  QUEUE_TIMEOUT: 'EXPIRED',
  RUN_DEADLINE_EXCEEDED: 'EXPIRED',
  WORKFLOW_UNAVAILABLE: 'CANCELED',
  AUTHORIZATION_REVOKED: 'CANCELED',
  CANCELED: 'CANCELED',
  SESSION_DELETED: 'CANCELED',
}

/** The Codes requirement of a code, preferring the one about execution details. */
function codeRequirement(code: string): string {
  const all = loadRequirements().requirements.filter(
    (r) => r.section === 'Codes' && r.codes.includes(code) && r.rule.includes(code),
  )
  const found = all.find((r) => r.rule.includes('execution details')) ?? all[0]
  if (!found) throw new Error(`no Codes requirement for ${code}`)
  return found.id
}

type Scenario = { name: string; applies_to: string[] }

describe('next step after a failed execution', () => {
  for (const [code, scenario, seconds = 10] of TABLE) {
    it(`${req(codeRequirement(code))} ${code}: scenario ${scenario} ends the execution ${STATUS[code] ?? 'FAILED'} with ${code}, retryable false`, async (ctx) => {
      const control = mockOnly(ctx, target, 'built-in scenarios')
      const list = await target.api.send('GET', '/_mock/scenarios', undefined, { check: false })
      const def = (list.body as { builtin: Scenario[] }).builtin.find((s) => s.name === scenario)
      expect(def, `built-in scenario ${scenario}`).toBeDefined()
      let error: { code: string; retryable?: boolean } | null
      let status: string
      if (def!.applies_to.includes('deployment')) {
        await control.queueScenario(target.world.deployments.active, scenario)
        const res = await createSession(target, { input: [{ type: 'TEXT', text: 'rehearse' }] })
        expect(res.status, res.text).toBe(202)
        await control.advance(seconds)
        const turn = await target.api.get((res.body as SessionReceipt).status_url, {
          key: target.world.keys.full,
        })
        ;({ status, error } = turn.body as typeof turn.body & {
          status: string
          error: { code: string; retryable?: boolean } | null
        })
      } else {
        const wf = role(ctx, target.world.workflows.available, 'available workflow')
        await control.queueScenario(wf, scenario)
        const { run_id } = await startRun(target, wf)
        await control.advance(seconds)
        ;({ status, error } = (await readRun(target, run_id)).run)
      }
      expect(status).toBe(STATUS[code] ?? 'FAILED')
      expect(error).toMatchObject({ code, retryable: false })
    })
  }
})
