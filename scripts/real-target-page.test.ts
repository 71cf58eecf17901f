/** docs/real-target.md's rendering (scripts/lib/real-target-page.ts) and the page's agreement with the catalog. */
import { existsSync, readFileSync } from 'node:fs'
import { expect, it } from 'vitest'
import { loadRequirements } from '../spec/index.js'
import { holding, renderRealTargetPage } from './lib/real-target-page.js'

const row = (id: string, state: string, reasons: string[] = []) => ({
  id,
  section: 'Call rates',
  verify: 'real',
  rule: 'r',
  state,
  reasons,
  tests: [],
})

it('a requirement is held when its tests ran, partly when some skipped, not held when all skipped', () => {
  expect(holding({ state: 'passed' })).toBe('held')
  expect(holding({ state: 'failed' })).toBe('held')
  expect(holding({ state: 'partial' })).toBe('partly')
  expect(holding({ state: 'skipped' })).toBe('not held')
  expect(holding({ state: 'not covered' })).toBe('no test')
})

it('renders each requirement with its skip reasons, a pipe in a reason escaped', () => {
  const page = renderRealTargetPage({
    requirements: [row('RATE-001', 'passed'), row('RATE-003', 'skipped', ['mock only: a | b'])],
  })
  expect(page).toContain('| RATE-001 | real | held |  |')
  expect(page).toContain('| RATE-003 | real | not held | mock only: a \\| b |')
  expect(page).toMatch(/\| held \| 1 \| 1 \|/)
})

it('the generated page lists every requirement of the catalog, and no other', () => {
  const path = new URL('../docs/real-target.md', import.meta.url)
  if (!existsSync(path)) throw new Error('docs/real-target.md is missing: npm run docs:real-target')
  const listed = [...readFileSync(path, 'utf8').matchAll(/^\| ([A-Z]+-\d{3}) \|/gm)].map(
    (m) => m[1],
  )
  expect(listed.sort()).toEqual(
    loadRequirements()
      .requirements.map((r) => r.id)
      .sort(),
  )
})
