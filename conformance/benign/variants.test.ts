/**
 * The benign variants stay meaningful: each patch applies to today's sources exactly once (a refactor that
 * moves the code makes the variant stale here, not silently the unbroken mock), names are unique, every
 * variant states its choice, and its selection names ids or areas of the catalog and loads at least one test
 * file of the suite. The benign runs themselves (npm run conformance:benign) take minutes and are not part of
 * npm test.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { filesFor } from '../cli/select.js'
import { loadRequirements } from '../../spec/index.js'
import { variantProblems } from '../mutants/mutate.js'
import { judgeBenign, selectionOf, unionOf } from './run.js'
import { BENIGN_VARIANTS } from './variants/index.js'
import { VARIANTS as PROTOCOL } from './variants/protocol.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

describe('benign variants', () => {
  it('has at least 14 protocol variants; names are unique and each states its choice', () => {
    expect(PROTOCOL.length).toBeGreaterThanOrEqual(14)
    expect(new Set(BENIGN_VARIANTS.map((v) => v.name)).size).toBe(BENIGN_VARIANTS.length)
    for (const v of BENIGN_VARIANTS) {
      expect(v.choice.length, v.name).toBeGreaterThan(40)
      expect(v.patches.length, v.name).toBeGreaterThan(0)
      for (const p of v.patches) expect(p.replace, v.name).not.toBe(p.find)
    }
  })

  it.for(BENIGN_VARIANTS.map((v) => [v.name, v] as const))(
    '%s applies to the current sources',
    ([, v]) => {
      expect(variantProblems(ROOT, v)).toEqual([])
    },
  )

  it.for(BENIGN_VARIANTS.map((v) => [v.name, v] as const))(
    '%s selects ids or areas of the catalog that load at least one test file',
    ([, v]) => {
      const catalog = loadRequirements()
      const ids = new Set(catalog.requirements.map((r) => r.id))
      const areas = new Set(Object.keys(catalog.areas))
      for (const s of selectionOf(v))
        expect(ids.has(s) || areas.has(s), `${v.name}: ${s}`).toBe(true)
      expect(filesFor(ROOT, selectionOf(v)).length, v.name).toBeGreaterThan(0)
    },
  )

  it('judges a variant by the tests that failed beyond the unbroken mock', () => {
    const t = (name: string, ids: string[]) => ({ file: 'f.test.ts', name, ids })
    const failed = [t('[A-001] x', ['A-001']), t('[B-001] y', ['B-001'])]
    expect(judgeBenign(failed, new Set(['f.test.ts > [B-001] y']), true)).toEqual({
      verdict: 'fails',
      failedIds: ['A-001'],
      failedTests: [failed[0]],
      alsoBaseline: ['f.test.ts > [B-001] y'],
    })
    expect(judgeBenign(failed.slice(1), new Set(['f.test.ts > [B-001] y']), true).verdict).toBe(
      'passes',
    )
    expect(judgeBenign([], new Set(), false).verdict).toBe('did-not-run')
    // The call-rate checks fail in a rehearsal by design (call rates off).
    expect(judgeBenign([t('[RATE-001] z', ['RATE-001'])], new Set(), true).verdict).toBe('passes')
  })

  it('runs the baseline over the union of the selections, or the whole suite when one has none', () => {
    const v = (select?: string[]) => ({ name: 'v', choice: '', patches: [], select })
    expect(unionOf([v(['A-001']), v(['A-001', 'B'])])).toEqual(['A-001', 'B'])
    expect(unionOf([v(['A-001']), v()])).toEqual([])
  })
})
