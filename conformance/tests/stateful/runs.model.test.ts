/**
 * Model-based test of Runs: random sequences of creates (with scenarios), reads, cancels, deletes, scenario
 * queueing and clock moves, checked against a model written from the document's Run transition table and
 * rules (conformance/model/runs/world.ts). On a real target only the time-free commands run.
 */
import fc from 'fast-check'
import { it } from 'vitest'
import { deepRunStates, runCommands } from '../../model/runs/commands.js'
import type { Command, Model, Real } from '../../model/runs/world.js'
import { fcParams } from '../../support/fc.js'
import { probesClientRule } from '../../support/probes.js'
import { req } from '../../support/req.js'
import { readWorkflow } from '../../support/runs.js'
import { role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

// Call-rate limits are tested on their own; here they would only move the clock behind the model's back.
// Every property run resets the world itself.
const target = useTarget({ rateLimits: false, freshEach: false })

it(`${req('STATE-001', 'STATE-002', 'STATE-005', 'STATE-006', 'STATE-008', 'STATE-009', 'STATE-011', 'STATE-014', 'STATE-016', 'STATE-022', 'STATE-028', 'RUN-004', 'RUN-005', 'RUN-007', 'RUN-010', 'RUN-011', 'RUN-021', 'DEL-001')} Runs follow the documented states and rules`, async (ctx) => {
  const workflowId = role(ctx, target.world.workflows.available, 'available workflow')
  // The model reads a deleted, expired or refused resource again to see it stay so: a resend after a
  // non-retryable answer, on purpose.
  probesClientRule(ctx, 'RETRY-001')
  const virtualTime = target.capabilities.virtualTime
  await fc.assert(
    fc.asyncProperty(runCommands(virtualTime), async (cmds) => {
      await target.fresh()
      const workflow = await readWorkflow(target, workflowId)
      const nowS = target.control ? Date.parse((await target.control.clock()).now) / 1000 : 0
      const model: Model = {
        nowS,
        workflowId,
        publishedVersion: workflow.published_version,
        requiredKeys: workflow.outputs
          .filter((o) => o.required === true && typeof o.key === 'string')
          .map((o) => o.key as string),
        key: target.world.keys.full,
        runs: [],
        queued: [],
        virtualTime,
      }
      const real: Real = { api: target.api, control: target.control }
      await fc.asyncModelRun(() => ({ model, real }), cmds)
    }),
    // On a mock, the deep states run first on every seed; then random sequences.
    {
      ...fcParams({ numRuns: 15 }),
      ...(virtualTime ? { examples: deepRunStates().map((cmds): [Command[]] => [cmds]) } : {}),
    },
  )
}, 120_000)
