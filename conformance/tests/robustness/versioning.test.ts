/**
 * Versioning (VER-004): within /v1 required inputs do not change. A request carrying exactly the inputs the
 * document requires, and nothing else, is accepted: a target that started requiring another input would refuse
 * it. The required lists are read from spec/openapi.yaml, so the test follows the document, not a copy of it.
 */
import { expect, it } from 'vitest'
import { req } from '../../support/req.js'
import { createSession } from '../../support/session-create.js'
import { deref } from '../../support/documented.js'
import { loadOpenApi } from '../../../spec/index.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

type Schema = { required?: string[]; properties?: Record<string, unknown> }
const doc = loadOpenApi() as unknown as {
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
  >
  components: { schemas: Record<string, Schema> }
}
const bodySchema = (path: string, method: string): Schema =>
  deref(doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema) as Schema

/** The smallest TEXT input item: exactly the fields the document requires of it. */
function minimalTextItem(): Record<string, unknown> {
  const schema = doc.components.schemas.TextInput as Schema
  const item: Record<string, unknown> = {}
  for (const field of schema.required ?? []) {
    if (field === 'type') item.type = 'TEXT'
    else if (field === 'text') item.text = 'Summarise the quarterly report'
    else throw new Error(`TextInput requires ${field}, which this test does not know how to fill`)
  }
  return item
}

it(`${req('VER-004')} accepts a Session creation that carries only the inputs the document requires`, async () => {
  const schema = bodySchema('/v1/deployments/{deployment_id}/sessions', 'post')
  const body = { input: [minimalTextItem()] }
  expect(Object.keys(body).sort()).toEqual([...(schema.required ?? [])].sort())

  const res = await createSession(target, body)
  expect(res.status, res.text).toBe(202)
  expect((res.body as { status: string }).status).toBe('QUEUED')
})
