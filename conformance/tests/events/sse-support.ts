/**
 * SSE helpers of the events tests: a raw HTTP reader that keeps the stream's exact text (frame format,
 * keep-alive comments, error frames) and a parser of standard SSE frames (LF, CR or CRLF line ends). Every
 * wait is bounded; every stream opened here is closed by closeAllStreams() (call it in afterEach).
 */
import http from 'node:http'
import { createParser } from 'eventsource-parser'

export type SseFrame = {
  id?: string
  event?: string
  data?: string
  /** Comment lines (without the leading colon). */
  comments: string[]
  /** The frame's lines as sent. */
  lines: string[]
}

export type RawStream = {
  status: number
  headers: http.IncomingHttpHeaders
  /** Everything received so far. */
  text(): string
  /** Complete frames received so far (a frame ends with a blank line). */
  frames(): SseFrame[]
  /**
   * Frames that carry an id (events), each event once: "The same event may arrive twice; drop duplicates by
   * event_id" (SSE-016), so a repeated id keeps its first frame.
   */
  events(): SseFrame[]
  /** Frames that carry an id as received, duplicates included. */
  allEvents(): SseFrame[]
  /** Resolves once pred holds on the received text, or rejects after timeoutMs. */
  waitFor(pred: (s: RawStream) => boolean, what: string, timeoutMs?: number): Promise<void>
  /** Resolves when the server ended the response, or rejects after timeoutMs. */
  waitEnd(timeoutMs?: number): Promise<void>
  readonly ended: boolean
  close(): void
}

const open = new Set<{ close(): void }>()

/** Closes every stream and EventSource opened by the tests of this file. */
export function closeAllStreams(): void {
  for (const s of open) s.close()
  open.clear()
}

/** Registers something to close in afterEach (an EventSource). */
export function track<T extends { close(): void }>(x: T): T {
  open.add(x)
  return x
}

/**
 * Parses the complete frames of an SSE stream's text as the SSE standard reads them: lines end with LF, CR or
 * CRLF, a blank line ends a frame. Field values, comments and event dispatch come from eventsource-parser (a
 * standard parser); this function only cuts the text at blank lines so that each frame keeps its own lines,
 * including frames that carry only comments (keep-alive), which dispatch no event.
 */
export function parseFrames(text: string): SseFrame[] {
  const frames: SseFrame[] = []
  let current: SseFrame = { comments: [], lines: [] }
  const parser = createParser({
    onEvent: (e) => {
      current.id = e.id
      current.event = e.event
      current.data = e.data
    },
    onComment: (comment) => current.comments.push(comment),
  })
  for (const raw of completeFrames(text.replace(/^\uFEFF/, ''))) {
    current = { comments: [], lines: raw.lines }
    // A frame cut after a lone CR: the streaming parser waits for the next character to tell CR from CRLF,
    // but the blank line is ended either way (completeFrames never cuts a CRLF), so an LF completes it now.
    parser.feed(raw.text.endsWith('\r') ? `${raw.text}\n` : raw.text)
    if (raw.lines.length > 0) frames.push(current)
  }
  return frames
}

const LINE_END = /\r\n|\r|\n/g

/** The complete frames of the text (each up to and including its blank line), with their lines as sent. */
function completeFrames(text: string): { text: string; lines: string[] }[] {
  const out: { text: string; lines: string[] }[] = []
  let lines: string[] = []
  let lineStart = 0
  let frameStart = 0
  for (const m of text.matchAll(LINE_END)) {
    const line = text.slice(lineStart, m.index)
    lineStart = m.index + m[0].length
    if (line !== '') {
      lines.push(line)
      continue
    }
    out.push({ text: text.slice(frameStart, lineStart), lines })
    frameStart = lineStart
    lines = []
  }
  return out
}

/** The frames that carry an id, a repeated id dropped (SSE-016: drop duplicates by event_id). */
export function distinctEvents(frames: readonly SseFrame[]): SseFrame[] {
  const seen = new Set<string>()
  return frames.filter((f) => {
    if (f.id === undefined || seen.has(f.id)) return false
    seen.add(f.id)
    return true
  })
}

/**
 * The names of a frame's fields as sent (comments left out): SSE-005 names id, event and data; their order
 * within a frame carries no meaning in the SSE standard.
 */
export const fieldNames = (f: SseFrame): string[] =>
  f.lines
    .filter((l) => !l.startsWith(':'))
    .map((l) => (l.includes(':') ? l.slice(0, l.indexOf(':')) : l))

/** Opens GET path with Accept text/event-stream; resolves once the status line and headers are in. */
export function openRaw(
  baseUrl: string,
  path: string,
  opts: { key?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RawStream> {
  const url = new URL(path, baseUrl)
  return new Promise((resolve, reject) => {
    let text = ''
    let ended = false
    const listeners = new Set<() => void>()
    const notify = () => {
      for (const l of [...listeners]) l()
    }
    const req = http.get(
      url,
      {
        agent: false,
        headers: {
          Accept: 'text/event-stream',
          ...(opts.key === undefined ? {} : { Authorization: `Bearer ${opts.key}` }),
          ...opts.headers,
        },
      },
      (res) => {
        clearTimeout(timer)
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
          notify()
        })
        const finish = () => {
          ended = true
          notify()
        }
        res.on('end', finish)
        res.on('close', finish)
        res.on('error', finish)
        const stream: RawStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: () => text,
          frames: () => parseFrames(text),
          events: () => distinctEvents(parseFrames(text)),
          allEvents: () => parseFrames(text).filter((f) => f.id !== undefined),
          get ended() {
            return ended
          },
          waitFor: (pred, what, timeoutMs = 5000) =>
            new Promise<void>((ok, fail) => {
              if (pred(stream)) return ok()
              const check = () => {
                if (pred(stream)) {
                  done()
                  ok()
                } else if (ended) {
                  done()
                  fail(new Error(`stream ended before ${what}; received:\n${text.slice(-2000)}`))
                }
              }
              const t = setTimeout(() => {
                done()
                fail(new Error(`timed out waiting for ${what}; received:\n${text.slice(-2000)}`))
              }, timeoutMs)
              const done = () => {
                clearTimeout(t)
                listeners.delete(check)
              }
              listeners.add(check)
            }),
          waitEnd: (timeoutMs = 5000) =>
            new Promise<void>((ok, fail) => {
              if (ended) return ok()
              const check = () => {
                if (!ended) return
                clearTimeout(t)
                listeners.delete(check)
                ok()
              }
              const t = setTimeout(() => {
                listeners.delete(check)
                fail(new Error(`stream did not end; received:\n${text.slice(-2000)}`))
              }, timeoutMs)
              listeners.add(check)
            }),
          close: () => {
            req.destroy()
            res.destroy()
          },
        }
        open.add(stream)
        resolve(stream)
      },
    )
    const timer = setTimeout(() => {
      req.destroy()
      reject(new Error(`no response headers for ${path}`))
    }, opts.timeoutMs ?? 5000)
    req.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })
}

/** The Event JSON of a frame's data line. */
export const eventOf = (f: SseFrame): Record<string, unknown> & { data: Record<string, unknown> } =>
  JSON.parse(f.data ?? 'null') as Record<string, unknown> & { data: Record<string, unknown> }
