/**
 * The fault-rule control API (MOCK-CONTRACT "Fault rules and the client referee"): POST /_mock/faults adds a
 * rule (201 with the rule), GET /_mock/faults lists them with their fired counts, DELETE /_mock/faults/{id}
 * removes one, DELETE /_mock/faults removes all. Bodies and their meaning: mock/faults/rules.ts.
 * GET and POST /_mock/forward-compat `{enabled}` read and switch the forward-compatibility rehearsal
 * (mock/domain/forward-compat.ts); a reset brings back the --forward-compat start value.
 * GET and POST /_mock/settings `{rate_limits?, allow_insecure_webhooks?}` read and switch the settings of
 * mock/domain/settings.ts until the next reset, which brings back the start flags.
 */
import { Hono } from 'hono'
import type { Env } from '../deps.js'
import { ApiError } from '../errors.js'
import { validateFaultRule } from '../faults/rules.js'
import { body, jsonBody } from '../http/control-body.js'
import { controlBodyAjv } from '../util/ajv.js'
import { settingsView } from '../domain/settings.js'

const forwardCompatBody = controlBodyAjv.compile<{ enabled: boolean }>({
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: { enabled: { type: 'boolean' } },
})

const settingsBody = controlBodyAjv.compile<{
  rate_limits?: boolean
  allow_insecure_webhooks?: boolean
}>({
  type: 'object',
  additionalProperties: false,
  properties: { rate_limits: { type: 'boolean' }, allow_insecure_webhooks: { type: 'boolean' } },
})

/** The /_mock/faults, /_mock/forward-compat and /_mock/settings routes. */
export function controlFaultRoutes(): Hono<Env> {
  const app = new Hono<Env>()

  app.post('/faults', async (c) => {
    const checked = validateFaultRule(await jsonBody(c))
    if (!checked.ok) {
      throw new ApiError('INVALID_INPUT', {
        status: 422,
        message: `invalid fault rule: ${checked.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        details: { errors: checked.errors },
      })
    }
    return c.json(c.var.deps.faults.add(checked.rule), 201)
  })

  app.get('/faults', (c) => c.json({ items: c.var.deps.faults.list() }))

  app.delete('/faults', (c) => {
    c.var.deps.faults.clear()
    return c.json({ items: [] })
  })

  app.delete('/faults/:id', (c) => {
    const id = c.req.param('id')
    if (!c.var.deps.faults.remove(id))
      throw new ApiError('NOT_FOUND', { message: `no fault rule "${id}"` })
    return c.json({ id, deleted: true })
  })

  app.get('/forward-compat', (c) => c.json({ enabled: c.var.deps.forwardCompat.enabled }))

  app.post('/forward-compat', async (c) => {
    const { enabled } = await body(c, forwardCompatBody)
    c.var.deps.forwardCompat.enabled = enabled
    return c.json({ enabled })
  })

  app.get('/settings', (c) => c.json(settingsView(c.var.deps.settings)))

  app.post('/settings', async (c) => {
    const patch = await body(c, settingsBody)
    const { settings } = c.var.deps
    if (patch.rate_limits !== undefined) settings.rateLimits = patch.rate_limits
    if (patch.allow_insecure_webhooks !== undefined)
      settings.allowInsecureWebhooks = patch.allow_insecure_webhooks
    return c.json(settingsView(settings))
  })

  return app
}
