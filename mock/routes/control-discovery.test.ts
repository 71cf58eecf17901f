/**
 * Issue #14 (for SDK test suites): discovery endpoints and version headers, a reset that rewinds the id
 * sequence and the clock mode, and --clock-start.
 */
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { afterEach, describe, expect, it } from 'vitest'
import { OPENAPI_FILE, PACKAGE_ROOT } from '../../spec/index.js'
import { clockStartMs, parseClockStart } from '../clock/clock.js'
import { createMock, type Mock } from '../index.js'

const PROJECT_A = 'aaaaaaaa-0000-4000-8000-000000000000'
const PACKAGE = JSON.parse(readFileSync(`${PACKAGE_ROOT}/package.json`, 'utf8')) as {
  version: string
}
const INTERFACE_VERSION = (
  parse(readFileSync(OPENAPI_FILE, 'utf8')) as { info: { version: string } }
).info.version

const open: Mock[] = []
afterEach(() => {
  for (const m of open.splice(0)) m.close()
})
async function start(options: Parameters<typeof createMock>[0] = {}): Promise<Mock> {
  const mock = await createMock(options)
  open.push(mock)
  return mock
}
const post = (mock: Mock, path: string, body: unknown = {}) =>
  mock.app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
/** A record id drawn from the seeded sequence: the id of a new artifact (control API). */
async function newArtifactId(mock: Mock): Promise<string> {
  const res = await post(mock, '/_mock/artifacts', {
    project_id: PROJECT_A,
    filename: 'a.txt',
    mime_type: 'text/plain',
    content_base64: 'aGk=',
  })
  expect(res.status).toBe(201)
  return ((await res.json()) as { artifact_id: string }).artifact_id
}

describe('discovery', () => {
  it('GET /_mock/health answers 200 {status: ok}', async () => {
    const res = await (await start()).app.request('/_mock/health')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
  })

  it("GET /_mock/version gives the package's version and the interface version it simulates", async () => {
    const res = await (await start()).app.request('/_mock/version')
    expect(await res.json()).toEqual({
      mock_version: PACKAGE.version,
      interface_version: INTERFACE_VERSION,
    })
  })

  it('every response carries X-Mock-Version and X-Mock-Interface-Version, errors and /v1 too', async () => {
    const mock = await start()
    for (const path of ['/_mock/clock', '/v1/deployments', '/no/such/path']) {
      const res = await mock.app.request(path)
      expect(res.headers.get('x-mock-version'), path).toBe(PACKAGE.version)
      expect(res.headers.get('x-mock-interface-version'), path).toBe(INTERFACE_VERSION)
    }
  })

  it('GET /_mock/openapi.yaml serves the document as shipped, /_mock/openapi.json the same as JSON', async () => {
    const mock = await start()
    const yamlRes = await mock.app.request('/_mock/openapi.yaml')
    expect(yamlRes.headers.get('content-type')).toMatch(/^application\/yaml/)
    const text = await yamlRes.text()
    expect(text).toBe(readFileSync(OPENAPI_FILE, 'utf8'))
    const jsonRes = await mock.app.request('/_mock/openapi.json')
    expect(await jsonRes.json()).toEqual(parse(text))
  })
})

describe('determinism', () => {
  it('a reset rewinds the id sequence: the same calls give the same ids after it', async () => {
    const mock = await start({ seed: 'sdk-tests' })
    const first = [await newArtifactId(mock), await newArtifactId(mock)]
    expect((await post(mock, '/_mock/reset')).status).toBe(200)
    expect([await newArtifactId(mock), await newArtifactId(mock)]).toEqual(first)
    await mock.reset()
    expect(await newArtifactId(mock)).toBe(first[0])
  })

  it('the same seed gives the same ids in two instances, another seed other ids', async () => {
    const a = await newArtifactId(await start({ seed: 'one' }))
    expect(await newArtifactId(await start({ seed: 'one' }))).toBe(a)
    expect(await newArtifactId(await start({ seed: 'two' }))).not.toBe(a)
  })

  it('a reset puts the clock back in the mode the mock started in', async () => {
    const mock = await start({ clock: 'realtime' })
    mock.clock.setMode('manual')
    const res = await post(mock, '/_mock/reset')
    expect(((await res.json()) as { mode: string }).mode).toBe('realtime')
    expect(mock.clock.mode).toBe('realtime')
    const manual = await start({ clock: 'manual' })
    manual.clock.setMode('realtime')
    await manual.reset()
    expect(manual.clock.mode).toBe('manual')
  })
})

describe('--clock-start', () => {
  it('starts virtual time at the given instant, and a reset goes back to it', async () => {
    const mock = await start({ clockStart: '2030-01-02T03:04:05Z' })
    expect(mock.clock.now().toISOString()).toBe('2030-01-02T03:04:05.000Z')
    await mock.clock.advance(3600)
    expect((await mock.reset()).toISOString()).toBe('2030-01-02T03:04:05.000Z')
  })

  it("'now' starts at the wall clock's time (a manual clock then stays there)", async () => {
    const before = Date.now()
    const mock = await start({ clockStart: 'now' })
    const after = Date.now()
    const t = mock.clock.now().getTime()
    expect(t).toBeGreaterThanOrEqual(before)
    expect(t).toBeLessThanOrEqual(after)
  })

  it("'now' is read at each reset too (injected wall clock)", () => {
    expect(clockStartMs('now', 1, () => 42)).toBe(42)
    expect(clockStartMs(7, 1, () => 42)).toBe(7)
    expect(clockStartMs(undefined, 1, () => 42)).toBe(1)
  })

  it('accepts now or an ISO 8601 time with a zone, and refuses anything else', async () => {
    expect(parseClockStart('now')).toBe('now')
    expect(parseClockStart('2026-11-02T09:00:00+01:00')).toBe(Date.parse('2026-11-02T08:00:00Z'))
    for (const bad of [
      '',
      'NOW',
      '2026-11-02',
      '2026-11-02T09:00:00',
      'tomorrow',
      '2026-13-40T99:00Z',
    ])
      expect(parseClockStart(bad), bad).toBeUndefined()
    await expect(createMock({ clockStart: 'yesterday' })).rejects.toThrow(RangeError)
  })
})
