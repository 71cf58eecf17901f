/**
 * Every skip has a reason: the report lists skipped requirements with why (mock only, an x-assumed rule, a
 * missing role, needs --allow-spend). A bare `ctx.skip()` would show as "skipped by the test without a reason".
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../', import.meta.url))

it('no test of the suite skips without saying why', () => {
  const bare: string[] = []
  for (const file of readdirSync(ROOT, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('skip-reasons.test.ts')) continue
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (/\bskip\(\s*\)/.test(line)) bare.push(`conformance/${file}:${i + 1}: ${line.trim()}`)
    })
  }
  expect(bare).toEqual([])
})
