/**
 * What --only selects (select.ts): an area selects its own requirements and the requirements of areas without a
 * resource of their own that name its resource; the title pattern and the files to load follow.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadRequirements } from '../../spec/index.js'
import { filesFor, inArea, isSelected, mayHold, onlyPattern, selectedIds } from './select.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const catalog = loadRequirements().requirements
const requirement = (id: string) => catalog.find((r) => r.id === id)!
const tag = (...ids: string[]) => ids.map((id) => `[${id}]`).join('')

/** The title of the first test of a file whose title contains text (the file is read, not run). */
function titleIn(file: string, text: string): string {
  const source = readFileSync(join(ROOT, file), 'utf8')
  const line = source.split('\n').find((l) => l.includes(text) && /\bit\(/.test(l))
  if (!line) throw new Error(`${file}: no test title containing "${text}"`)
  const ids = [...line.matchAll(/'([A-Z]+-\d{3})'/g)].map((m) => m[1]!)
  return `${tag(...ids)} ${text}`
}

describe('--only by area', () => {
  it('RUN selects the test of a cancel of an ended Run (tagged STATE-011 only)', () => {
    const title = titleIn('conformance/tests/runs/cancel-delete.test.ts', 'leaves a terminal Run')
    expect(title).not.toMatch(/\[RUN-/)
    expect(new RegExp(onlyPattern(['RUN'])!).test(title)).toBe(true)
    expect(isSelected(['RUN'], 'STATE-011')).toBe(true)
    expect(filesFor(ROOT, ['RUN'])).toContain('conformance/tests/runs/cancel-delete.test.ts')
  })

  it("FILE selects FILE_TOO_LARGE's status (ERR-043) and the 20 MiB rule (SIZE-007)", () => {
    const pattern = new RegExp(onlyPattern(['FILE'])!)
    // The fault-rule test's title: `[ERR-043] FILE_TOO_LARGE: a fault rule answers 413 ...`.
    expect(pattern.test(`${tag('ERR-043')} FILE_TOO_LARGE: a fault rule answers 413`)).toBe(true)
    expect(pattern.test(`${tag('SIZE-007')} an input file over 20 MiB`)).toBe(true)
    expect(isSelected(['FILE'], 'ERR-043')).toBe(true)
    expect(filesFor(ROOT, ['FILE'])).toContain('conformance/tests/errors/fault-rules.test.ts')
  })

  it('SES selects the idempotency_expires_at rule of a receipt (RET-001)', () => {
    const title = titleIn(
      'conformance/tests/idempotency/idempotency.test.ts',
      'sets idempotency_expires_at at least 24 hours after acceptance',
    )
    expect(title).toMatch(/^\[RET-001\] /)
    expect(new RegExp(onlyPattern(['SES'])!).test(title)).toBe(true)
    expect(filesFor(ROOT, ['SES'])).toContain('conformance/tests/idempotency/idempotency.test.ts')
  })

  it('still selects every id of the area itself, and a test whatever else its title names', () => {
    const pattern = new RegExp(onlyPattern(['RUN'])!)
    for (const r of catalog.filter((x) => x.id.startsWith('RUN-')))
      expect(pattern.test(`${tag('ERR-001', r.id)} t`)).toBe(true)
    expect(pattern.test(`${tag('RUN-0141')} not an id`)).toBe(false)
  })

  it('keeps endpoint areas apart and leaves out rules that do not name the resource', () => {
    // SES-001 (the Session receipt's idempotency_expires_at) is not a Run rule; a Codes rule of another resource
    // is not either.
    expect(inArea('RUN', requirement('SES-001'))).toBe(false)
    expect(inArea('RUN', requirement('ERR-043'))).toBe(false)
    expect(inArea('FILE', requirement('STATE-011'))).toBe(false)
    // Areas without a resource of their own select their ids only.
    expect([...selectedIds(['STATE'])].every((id) => id.startsWith('STATE-'))).toBe(true)
    expect(isSelected(['SVC-002'], 'SVC-001')).toBe(false)
    expect(isSelected([], 'SVC-001')).toBe(true)
  })

  it('loads a file naming a requirement of the area by its resource', () => {
    expect(mayHold(`it(\`\${req('STATE-011')} t\`)`, ['RUN'])).toBe(true)
    expect(mayHold(`it(\`\${req('STATE-011')} t\`)`, ['FILE'])).toBe(false)
    expect(mayHold(`it(\`\${req('STATE-0111')} t\`)`, ['RUN'])).toBe(false)
  })
})
