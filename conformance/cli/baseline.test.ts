/** The expected-failures baseline of the conformance CLI (--baseline, --write-baseline). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { baselineText, compareWithBaseline, parseBaseline, readBaseline } from './baseline.js'

describe('expected-failures baseline', () => {
  it('reads ids from text lines, ignoring comments and repeats', () => {
    expect(
      parseBaseline('SES-001  # a comment naming RUN-002\n\nRATE-001 RATE-002\nSES-001\n'),
    ).toEqual(['SES-001', 'RATE-001', 'RATE-002'])
  })

  it('refuses a file naming an id the catalog does not have', () => {
    const dir = mkdtempSync(join(tmpdir(), 'baseline-'))
    try {
      const file = join(dir, 'baseline.txt')
      writeFileSync(file, 'SES-001\nSES-999\n')
      expect(() => readBaseline(file, new Set(['SES-001']))).toThrow(/SES-999/)
      expect(() => readBaseline(join(dir, 'none.txt'), new Set())).toThrow(/cannot read/)
      writeFileSync(file, 'SES-001\n')
      expect(readBaseline(file, new Set(['SES-001']))).toEqual(['SES-001'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('splits failures into new and expected, and names baselined ids that now pass', () => {
    const states = [
      { id: 'A-001', state: 'failed' },
      { id: 'A-002', state: 'failed' },
      { id: 'A-003', state: 'passed' },
      { id: 'A-004', state: 'skipped' },
      { id: 'A-005', state: 'passed' },
    ]
    expect(compareWithBaseline(states, ['A-002', 'A-003', 'A-004'])).toEqual({
      newFailures: ['A-001'],
      stillFailing: ['A-002'],
      nowPassing: ['A-003'],
    })
  })

  it('writes a file that reads back as the failed ids', () => {
    const text = baselineText([
      { id: 'SES-001', rule: 'The 202 receipt\nhas fields.' },
      { id: 'RATE-001', rule: 'Accept-class calls are limited to 10 per minute.' },
    ])
    expect(parseBaseline(text)).toEqual(['SES-001', 'RATE-001'])
    expect(text).toContain('SES-001  # The 202 receipt has fields.')
  })
})
