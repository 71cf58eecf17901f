/** conformance/index.ts: run(options) passes each option to the CLI as the flag of the same name. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toArgv, type RunOptions } from '../index.js'
import { parseCliArgs } from './args.js'

const catalog = { ids: new Set(['SES-022', 'AUTH-001']), areas: new Set(['SES', 'AUTH']) }
const text = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/)

describe('run(options) of ./conformance', () => {
  it('gives the CLI the same options as its flags would', () => {
    const options = fc.record(
      {
        baseUrl: fc.constantFrom('http://127.0.0.1:4010', 'https://api.example.com'),
        apiKey: text,
        deployment: text,
        workflow: text,
        ownerToken: text,
        world: text,
        controlToken: text,
        // --max-executions and --max-su need --allow-spend.
        allowSpend: fc.constant(true),
        maxExecutions: fc.integer({ min: 1, max: 1000 }),
        maxSu: fc.integer({ min: 1, max: 1000 }),
        callRates: fc.oneof(
          fc.record({ accept: fc.integer({ min: 1, max: 1000 }) }),
          fc.record({ read: fc.integer({ min: 1, max: 1000 }) }),
          fc.record({
            accept: fc.integer({ min: 1, max: 1000 }),
            read: fc.integer({ min: 1, max: 1000 }),
          }),
        ),
        only: fc.subarray(['SES-022', 'AUTH-001', 'SES', 'AUTH'], { minLength: 1 }),
        seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        numRuns: fc.integer({ min: 1, max: 1000 }),
        reportDir: text,
        baseline: text,
        writeBaseline: text,
        strict: fc.boolean(),
        verbose: fc.boolean(),
      },
      { requiredKeys: ['baseUrl', 'allowSpend'] },
    )
    fc.assert(
      fc.property(options, (o: RunOptions) => {
        const parsed = parseCliArgs(toArgv(o), catalog, {})
        for (const [name, value] of Object.entries(o)) {
          const got = (parsed as Record<string, unknown>)[name]
          if (name === 'only') expect(got).toEqual((value as string[]).map((s) => s.toUpperCase()))
          else expect(got).toEqual(value)
        }
      }),
    )
  })

  it('gives no flag for an option left out or false', () => {
    expect(toArgv({})).toEqual([])
    expect(toArgv({ allowSpend: false, verbose: false, only: [] })).toEqual([])
  })
})
