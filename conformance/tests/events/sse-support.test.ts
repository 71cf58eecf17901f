/**
 * The suite's SSE reader (sse-support.ts) reads a stream as the SSE standard does: lines end with LF, CR or
 * CRLF. A tiny local server sends the same frames with each line end, in chunks cut between a CR and its LF,
 * and the reader must give the same frames for all three.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { closeAllStreams, openRaw, parseFrames, type RawStream } from './sse-support.js'

const EOL = { LF: '\n', CRLF: '\r\n', CR: '\r' } as const
type Eol = keyof typeof EOL

/** The frames the server sends, one array of lines each (a blank line follows every frame). */
const FRAMES = [
  ['id: 11111111-1111-4111-8111-111111111111', 'event: turn.progress', 'data: {"n":1}'],
  [': keep-alive'],
  ['id: 22222222-2222-4222-8222-222222222222', 'event: message.created', 'data:{"n":2}'],
  // Two data lines are one value joined with LF, whatever the stream's line ends.
  ['id: 33333333-3333-4333-8333-333333333333', 'data: first', 'data: second'],
  ['event: error', 'data: {"error":{"code":"NOT_FOUND"}}'],
]

const streamText = (eol: Eol) =>
  FRAMES.map((lines) => lines.join(EOL[eol]) + EOL[eol].repeat(2)).join('')

/** Cuts the text into chunks after every CR and in the middle of every line, to cross every boundary. */
function chunks(text: string): string[] {
  const out: string[] = []
  let rest = text
  while (rest.length > 0) {
    const cr = rest.indexOf('\r')
    const cut = cr >= 0 && cr < 8 ? cr + 1 : Math.min(8, rest.length)
    out.push(rest.slice(0, cut))
    rest = rest.slice(cut)
  }
  return out
}

let server: http.Server
let baseUrl: string
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const eol = url.searchParams.get('eol') as Eol
    const keepOpen = url.searchParams.get('open') === '1'
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
    void (async () => {
      for (const chunk of chunks(streamText(eol))) {
        if (res.destroyed) return
        res.write(chunk)
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      if (!keepOpen) res.end()
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterEach(() => {
  closeAllStreams()
})
afterAll(async () => {
  closeAllStreams()
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

async function readAll(eol: Eol): Promise<RawStream> {
  const s = await openRaw(baseUrl, `/events?eol=${eol}`)
  expect(s.status).toBe(200)
  await s.waitEnd()
  return s
}

describe('SSE reader of the suite', () => {
  it('reads the frames sent with LF line ends', async () => {
    const s = await readAll('LF')
    expect(s.frames()).toEqual([
      {
        id: '11111111-1111-4111-8111-111111111111',
        event: 'turn.progress',
        data: '{"n":1}',
        comments: [],
        lines: FRAMES[0],
      },
      { comments: ['keep-alive'], lines: FRAMES[1] },
      {
        id: '22222222-2222-4222-8222-222222222222',
        event: 'message.created',
        data: '{"n":2}',
        comments: [],
        lines: FRAMES[2],
      },
      {
        id: '33333333-3333-4333-8333-333333333333',
        event: undefined,
        data: 'first\nsecond',
        comments: [],
        lines: FRAMES[3],
      },
      {
        id: undefined,
        event: 'error',
        data: '{"error":{"code":"NOT_FOUND"}}',
        comments: [],
        lines: FRAMES[4],
      },
    ])
    expect(s.events().map((f) => f.id)).toEqual([
      '11111111-1111-4111-8111-111111111111',
      '22222222-2222-4222-8222-222222222222',
      '33333333-3333-4333-8333-333333333333',
    ])
  })

  it.each(['CRLF', 'CR'] as const)('reads the same frames sent with %s line ends', async (eol) => {
    const lf = await readAll('LF')
    const other = await readAll(eol)
    expect(other.text()).toContain(EOL[eol])
    expect(other.frames()).toEqual(lf.frames())
    expect(other.events()).toEqual(lf.events())
  })

  it.each(['LF', 'CRLF', 'CR'] as const)(
    'sees a %s frame complete as soon as its blank line arrives, on an open stream',
    async (eol) => {
      const s = await openRaw(baseUrl, `/events?eol=${eol}&open=1`)
      await s.waitFor((x) => x.frames().length === FRAMES.length, 'every frame')
      expect(s.ended).toBe(false)
      expect(s.frames().at(-1)!.event).toBe('error')
    },
  )

  it('keeps an unfinished frame out until its blank line, whatever the line ends', () => {
    for (const eol of ['LF', 'CRLF', 'CR'] as const) {
      const text = streamText(eol)
      const cut = text.lastIndexOf('event: error')
      expect(parseFrames(text.slice(0, cut + 5))).toHaveLength(FRAMES.length - 1)
      // With the last line ended but no blank line yet, the frame is not complete either.
      const lastLineEnd = text.length - EOL[eol].length
      expect(parseFrames(text.slice(0, lastLineEnd))).toHaveLength(FRAMES.length - 1)
      expect(parseFrames(text)).toHaveLength(FRAMES.length)
    }
  })
})
