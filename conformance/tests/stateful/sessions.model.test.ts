/**
 * Model-based test of Sessions and Turns: random sequences of creates, inputs, reads, cancels, closes,
 * deletes, resends and clock moves, checked against a model written from the document's states and rules.
 */
import fc from 'fast-check'
import { it } from 'vitest'
import { deepSessionStates, sessionCommands } from '../../model/sessions/commands.js'
import type { Command, Model, Real } from '../../model/sessions/world.js'
import { fcParams } from '../../support/fc.js'
import { probesClientRule } from '../../support/probes.js'
import { req } from '../../support/req.js'
import { mockOnly } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

// Call-rate limits are tested on their own; here they would only move the clock behind the model's back.
// Every property run resets the world itself.
const target = useTarget({ rateLimits: false, freshEach: false })

it(`${req('STATE-001', 'STATE-002', 'STATE-005', 'STATE-006', 'STATE-007', 'STATE-024', 'STATE-025', 'DEL-001', 'IDEM-001', 'BUD-007')} Sessions and Turns follow the documented states and rules`, async (ctx) => {
  const control = mockOnly(ctx, target, 'the model moves virtual time and queues scenarios')
  // The model reads a deleted, expired or refused resource again to see it stay so: a resend after a
  // non-retryable answer, on purpose.
  probesClientRule(ctx, 'RETRY-001')
  await fc.assert(
    fc.asyncProperty(sessionCommands(), async (cmds) => {
      await target.fresh()
      const nowS = Date.parse((await control.clock()).now) / 1000
      const model: Model = {
        nowS,
        sessions: [],
        deploymentId: target.world.deployments.active,
        key: target.world.keys.full,
        receipts: [],
        queued: [],
      }
      const real: Real = { api: target.api, control }
      await fc.asyncModelRun(() => ({ model, real }), cmds)
    }),
    // The deep states run first on every seed; then random sequences.
    {
      ...fcParams({ numRuns: 40 }),
      examples: deepSessionStates().map((cmds): [Command[]] => [cmds]),
    },
  )
}, 120_000)
