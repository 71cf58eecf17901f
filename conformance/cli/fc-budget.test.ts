/**
 * Property sizes by target (support/fc.ts): every example of a property on a real target is a paced call, so
 * the suite draws at most REAL_TARGET_NUM_RUNS examples there unless --num-runs (FC_NUM_RUNS) asks otherwise.
 */
import { expect, it } from 'vitest'
import { numRunsFor, REAL_TARGET_NUM_RUNS } from '../support/fc.js'

const REAL = { TARGET_URL: 'https://api.example.test', TARGET_WORLD_JSON: '{}' }

it('a mock target draws the property default; a real target at most the real-target bound', () => {
  expect(numRunsFor({}, 30)).toBe(30)
  expect(numRunsFor({ TARGET_URL: 'http://127.0.0.1:4010' }, 30)).toBe(30)
  expect(numRunsFor(REAL, 30)).toBe(REAL_TARGET_NUM_RUNS)
  expect(numRunsFor(REAL, 3)).toBe(3)
})

it('--num-runs (FC_NUM_RUNS) wins on every target', () => {
  expect(numRunsFor({ ...REAL, FC_NUM_RUNS: '40' }, 30)).toBe(40)
  expect(numRunsFor({ FC_NUM_RUNS: '2' }, 30)).toBe(2)
})
