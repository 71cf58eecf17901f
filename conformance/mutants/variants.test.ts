/**
 * The mutation self-test's variants stay meaningful: each patch applies to today's sources exactly once (a
 * refactor that moves the code makes the variant stale here, not silently harmless), names are unique, every
 * expected id is a requirement of the catalog, and the verdicts are judged as run.ts says.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadRequirements } from '../../spec/index.js'
import { patchProblem, variantProblems } from './mutate.js'
import { countedFailures, judge, passes, selectionOf } from './run.js'
import { VARIANTS } from './variants.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

describe('mutation self-test variants', () => {
  it('has at least 20 variants with unique names, each breaking something', () => {
    expect(VARIANTS.length).toBeGreaterThanOrEqual(20)
    expect(new Set(VARIANTS.map((v) => v.name)).size).toBe(VARIANTS.length)
    for (const v of VARIANTS) {
      expect(v.patches.length, v.name).toBeGreaterThan(0)
      for (const p of v.patches) expect(p.replace, v.name).not.toBe(p.find)
    }
  })

  it.for(VARIANTS.map((v) => [v.name, v] as const))(
    '%s applies to the current sources',
    ([, v]) => {
      expect(variantProblems(ROOT, v)).toEqual([])
    },
  )

  it('names only requirement ids of the catalog', () => {
    const ids = new Set(loadRequirements().requirements.map((r) => r.id))
    for (const v of VARIANTS)
      for (const id of v.expect) expect(ids.has(id), `${v.name}: ${id}`).toBe(true)
  })

  it('refuses a patch whose text is missing or repeated', () => {
    expect(patchProblem('a b a', { file: 'f', find: 'a', replace: 'c' })).toMatch(/2 times/)
    expect(patchProblem('a b', { file: 'f', find: 'x', replace: 'c' })).toMatch(/0 times/)
    expect(patchProblem(undefined, { file: 'f', find: 'x', replace: 'c' })).toMatch(/no such file/)
    expect(patchProblem('a b', { file: 'f', find: 'b', replace: 'c' })).toBeUndefined()
  })

  it('counts only expected ids that the unbroken mock passed as catching a variant', () => {
    const v = { name: 'v', bug: '', patches: [], expect: ['A-001', 'A-002'] }
    expect(judge(v, ['A-001', 'B-001'], new Set(), true)).toEqual({
      verdict: 'caught',
      caughtBy: ['A-001'],
      alsoFailed: ['B-001'],
    })
    expect(judge(v, ['A-001', 'B-001'], new Set(['A-001']), true).verdict).toBe('caught-elsewhere')
    expect(judge(v, [], new Set(), true).verdict).toBe('survived')
    expect(judge(v, [], new Set(), false).verdict).toBe('did-not-run')
    expect(selectionOf(v)).toEqual(['A-001', 'A-002'])
    expect(selectionOf(v, true)).toEqual(['A'])
  })

  it('passes a variant caught in mock mode, and in real mode unless it states why a real target cannot show it', () => {
    const caught = { verdict: 'caught' as const, caughtBy: [], alsoFailed: [], seconds: 0 }
    const missed = { ...caught, verdict: 'survived' as const }
    expect(passes({ ...caught })).toBe(true)
    expect(passes({ ...caught, real: caught })).toBe(true)
    expect(passes({ ...caught, real: missed })).toBe(false)
    expect(passes({ ...caught, real: missed, realMiss: 'needs virtual time' })).toBe(true)
    expect(passes({ ...missed, real: caught, realMiss: 'x' })).toBe(false)
    expect(passes({ ...missed, real: caught, modes: ['real'] })).toBe(true)
    expect(passes({ ...missed, real: missed, modes: ['real'] })).toBe(false)
  })

  it('leaves out of a real-mode run the ids failed only by call-rate checks (call rates are off there)', () => {
    const outcome = {
      failed: ['RATE-001', 'RUN-001', 'RATE-005'],
      failedTests: [
        { file: 'f', name: 'a', ids: ['RATE-001'] },
        { file: 'f', name: 'b', ids: ['RUN-001', 'RATE-005'] },
      ],
    }
    expect(countedFailures(outcome, 'mock')).toEqual(outcome.failed)
    expect(countedFailures(outcome, 'real')).toEqual(['RUN-001', 'RATE-005'])
  })

  it('states a real-mode reason only where it says something', () => {
    for (const v of VARIANTS)
      if (v.realMiss !== undefined) expect(v.realMiss.length, v.name).toBeGreaterThan(20)
  })
})
