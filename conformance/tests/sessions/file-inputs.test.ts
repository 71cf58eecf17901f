/**
 * FILE items in Turn input (Turn input and request options; Files and artifacts; Retention): the file must be a
 * READY input file of this Project or Session, is bound to one execution, at most 20 and none twice, of a type
 * the Deployment accepts, and within its retention.
 */
import { expect, it } from 'vitest'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { sample, upload } from '../../support/uploads.js'

const target = useTarget()

async function uploaded(
  filename = 'hello.txt',
  contentType = 'text/plain',
  key?: string,
): Promise<string> {
  const res = await upload(target, { filename, contentType, content: sample(filename) }, { key })
  expect(res.status, res.text).toBe(201)
  return (res.body as { file_id: string }).file_id
}
const withFiles = (...ids: string[]) => ({
  input: [
    { type: 'TEXT', text: 'Read the attached files' },
    ...ids.map((file_id) => ({ type: 'FILE', file_id })),
  ],
  limits: { max_su: 1 },
})

it(`${req('FILE-009', 'STATE-005')} accepts a READY uploaded file as Turn input`, async () => {
  const res = await createSession(target, withFiles(await uploaded()))
  expect(res.status, res.text).toBe(202)
})

it(`${req('FILE-009')} refuses a file already bound to another execution`, async () => {
  const fileId = await uploaded()
  const first = await createSession(target, withFiles(fileId))
  expect(first.status).toBe(202)
  const again = await createSession(target, withFiles(fileId))
  expect(again.status).toBeGreaterThanOrEqual(400)
  expect(again.status).toBeLessThan(500)
  // Assumed code (the document names none): the content is not gone, so not 410 FILE_EXPIRED. The file now
  // belongs to the first Session (another Session's file is outside access); its next Turn gets the reason.
  if (target.control) {
    await target.control.advance(10)
    const { session_id } = first.body as SessionReceipt
    const next = await target.api.post(`/v1/sessions/${session_id}/turns`, withFiles(fileId), {
      key: target.world.keys.full,
      idem: `bound-${fileId}`,
    })
    expectError(next, 'INVALID_INPUT', {
      status: 422,
      details: { file_id: fileId, reason: 'BOUND_TO_ANOTHER_EXECUTION' },
    })
  }
})

it(`${req('SES-006', 'AUTH-009')} answers 404 NOT_FOUND for a file of another Project`, async (ctx) => {
  const other = role(ctx, target.world.keys.otherProject, 'key of another project')
  const fileId = await uploaded('hello.txt', 'text/plain', other)
  expectError(await createSession(target, withFiles(fileId)), 'NOT_FOUND')
})

it(`${req('SIZE-008', 'ERR-053')} refuses more than 20 input files or a file listed twice with 422 TOO_MANY_FILES`, async () => {
  const fileId = await uploaded()
  expectError(await createSession(target, withFiles(fileId, fileId)), 'TOO_MANY_FILES')
  const many = Array.from(
    { length: 21 },
    (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  )
  expectError(await createSession(target, withFiles(...many)), 'TOO_MANY_FILES')
})

it(`${req('DEP-005')} refuses an input file whose type the Deployment does not accept with 415 UNSUPPORTED_FILE_TYPE`, async (ctx) => {
  mockOnly(ctx, target, 'needs a fixture Deployment with narrowed input_mime_types')
  const list = await target.api.get('/v1/deployments', { key: target.world.keys.full })
  const narrowed = (
    list.body as { items: { id: string; status: string; input_mime_types: string[] | null }[] }
  ).items.find(
    (d) => d.status === 'ACTIVE' && d.input_mime_types && !d.input_mime_types.includes('image/png'),
  )
  if (!narrowed) ctx.skip('no ACTIVE Deployment narrows its input types')
  const png = await uploaded('pixel.png', 'image/png')
  expectError(
    await createSession(target, withFiles(png), { deploymentId: narrowed!.id }),
    'UNSUPPORTED_FILE_TYPE',
  )
})

it(`${req('RET-006', 'ERR-054')} answers 410 FILE_EXPIRED for a pre-uploaded file not used within 24 hours`, async (ctx) => {
  const control = mockOnly(ctx, target, 'needs 24 hours of virtual time')
  const fileId = await uploaded()
  await control.advance(24 * 3600 + 1)
  expectError(await createSession(target, withFiles(fileId)), 'FILE_EXPIRED')
})

it(`${req('RET-007')} keeps a Session file 30 days from its upload`, async (ctx) => {
  const control = mockOnly(ctx, target, 'reads the virtual clock')
  const r = (await createSession(target, withFiles())).body as SessionReceipt
  const res = await upload(
    target,
    { filename: 'notes.md', contentType: 'text/markdown', content: sample('notes.md') },
    { path: `/v1/sessions/${r.session_id}/files` },
  )
  expect(res.status, res.text).toBe(201)
  const now = Date.parse((await control.clock()).now)
  expect(Date.parse((res.body as { expires_at: string }).expires_at) - now).toBe(
    30 * 24 * 3600 * 1000,
  )
})
