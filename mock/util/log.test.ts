import { describe, expect, it } from 'vitest'
import { memoryLog, withoutRequestLines } from './log.js'

describe('logs', () => {
  it('--quiet drops only the per-request lines: errors and other events still pass', () => {
    const sink = memoryLog()
    const quiet = withoutRequestLines(sink)
    quiet.info('request', { status: 200 })
    quiet.info('client aborted', { request_id: 'req_1' })
    quiet.error('unhandled error', { request_id: 'req_2' })
    expect(sink.lines.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'client aborted'],
      ['error', 'unhandled error'],
    ])
  })
})
