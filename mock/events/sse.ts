/**
 * Open SSE streams (Events > SSE streams): replay of stored events after the cursor, then live events of the
 * same Session or Run once the appending transaction has committed, a `: keep-alive` comment every 15 s of
 * virtual time, permission re-checks on every delivery and keep-alive (AUTH-010), an error frame then close,
 * and a bounded buffer: a consumer that leaves it full for about 10 s of wall time is disconnected (SSE-022).
 * A stream never touches the execution: closing it cancels nothing (SSE-004). A stream fault rule
 * (mock/faults/rules.ts) given at open cuts it after some events, sends an error frame, repeats every event
 * or stalls it (no more frames, no keep-alive, the connection left open).
 */
import { setImmediate } from 'node:timers'
import { wallTimeout } from '../clock/wall-timeout.js'
import type { Deps } from '../deps.js'
import { errorEnvelope, type ApiError } from '../errors.js'
import { faultError, type StreamAction } from '../faults/rules.js'
import { visibleEventsAfter } from '../store/events.js'
import { getTimer } from '../store/timers.js'
import { accessProblem, type Aggregate } from '../access/access.js'
import { eventsVisibleSince } from '../domain/retention.js'
import type { EventRecord } from './log.js'
import { errorFrame, eventFrame, KEEP_ALIVE_FRAME, retryFrame } from './public.js'

/** The `sse.keep-alive` timer kind: one timer row per open stream, due keepAliveMs after the previous one. */
export const KEEP_ALIVE_KIND = 'sse.keep-alive'

/** Stream limits of one mock instance (unit tests lower them through createMock's sseLimits option). */
export type SseLimits = {
  /** Virtual ms between keep-alive comments (Time limits: about every 15 seconds). */
  keepAliveMs: number
  /** Wall ms a full buffer may stay unread before the consumer is disconnected (about 10 seconds). */
  sendLimitMs: number
  /** Bytes queued for one consumer beyond what the socket took (the bound of "does not buffer without bound"). */
  bufferBytes: number
  /**
   * The reconnection delay a stream suggests in its first frame (`retry:`, wall ms), so standard EventSource
   * clients reconnect promptly in tests. Assumed: the document names no hint (x-assumed in openapi.yaml).
   */
  retryMs: number
}

export const DEFAULT_SSE_LIMITS: Readonly<SseLimits> = Object.freeze({
  keepAliveMs: 15_000,
  sendLimitMs: 10_000,
  bufferBytes: 64 * 1024,
  retryMs: 1000,
})

/** Events read from the store per query while replaying or delivering. */
const BATCH = 100

type Stream = {
  id: string
  deps: Deps
  aggregate: Aggregate
  apiKey: string
  requestId: string
  /** Virtual ms when the stream was opened (the client referee's record of it). */
  openedAtMs: number
  /** Sequence of the last event written to this stream. */
  lastSequence: number
  controller: ReadableStreamDefaultController<Uint8Array>
  closed: boolean
  keepAliveTimer: string | undefined
  cancelStall: (() => void) | undefined
  pumping: boolean
  pumpAgain: boolean
  /** A stream fault rule's action, the events sent so far, and whether it stalled the stream. */
  fault: { action: StreamAction; sent: number; stalled: boolean } | undefined
}

/** The open streams of one mock instance (deps.streams). */
export type StreamHub = {
  readonly limits: Readonly<SseLimits>
  streams: Map<string, Stream>
  byAggregate: Map<string, Set<Stream>>
  /** Aggregates with appended events waiting for the post-commit flush. */
  dirty: Set<string>
  flushQueued: boolean
  /** Streams opened so far: with the process id, a stream id no earlier process (--db) used. */
  opened: number
}

const encoder = new TextEncoder()

/** A mock instance's empty stream hub. */
export function createStreamHub(limits: Partial<SseLimits> = {}): StreamHub {
  return {
    limits: { ...DEFAULT_SSE_LIMITS, ...limits },
    streams: new Map(),
    byAggregate: new Map(),
    dirty: new Set(),
    flushQueued: false,
    opened: 0,
  }
}

/**
 * The event-appended listener: appends run inside the writer's transaction, so note the aggregate and deliver
 * from the store after commit (a microtask runs only once the synchronous transaction has finished; a
 * rolled-back event is never read).
 */
export function notifyStreams(deps: Deps, event: EventRecord): void {
  const hub = deps.streams
  if (!hub.byAggregate.has(event.aggregate_id)) return
  hub.dirty.add(event.aggregate_id)
  if (hub.flushQueued) return
  hub.flushQueued = true
  queueMicrotask(() => {
    hub.flushQueued = false
    const dirty = [...hub.dirty]
    hub.dirty.clear()
    for (const id of dirty) for (const s of [...(hub.byAggregate.get(id) ?? [])]) pump(s)
  })
}

/**
 * The `sse.keep-alive` timer handler: a keep-alive comment after a permission re-check. A row whose stream
 * is gone (closed, or a restart with --db) fires and does nothing.
 */
export function keepAlive(deps: Deps, streamId: string): void {
  const stream = deps.streams.streams.get(streamId)
  if (!stream || stream.closed) return
  stream.keepAliveTimer = undefined
  // A stalled stream sends nothing more, keep-alives included.
  if (stream.fault?.stalled) return
  const problem = accessProblem(deps, stream.apiKey, stream.aggregate)
  if (problem) return fail(stream, problem)
  write(stream, KEEP_ALIVE_FRAME)
  // The next keep-alive is scheduled once this advance is over (a macrotask later), so one long manual
  // advance gives one keep-alive per stream instead of a timer chain that would trip the loop limit.
  setImmediate(() => scheduleKeepAlive(stream))
}

export type OpenStreamOptions = {
  aggregate: Aggregate
  apiKey: string
  /** The request id of the stream's request, for error frames. */
  requestId: string
  /** Replay starts after this sequence (0: from the first event still within retention). */
  afterSequence: number
  /** A stream fault rule's action for this stream (mock/faults/rules.ts). */
  fault?: StreamAction
}

/** The headers of a stream's 200 answer (a HEAD request gets them without a stream). */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'text/event-stream; charset=utf-8',
  'X-Accel-Buffering': 'no',
})

/** Opens a stream: the 200 response whose body is the SSE frames. */
export function openStream(deps: Deps, opts: OpenStreamOptions): Response {
  const hub = deps.streams
  reviveKeepAlives(hub)
  let stream: Stream | undefined
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        hub.opened += 1
        stream = {
          id: `sse-${process.pid}-${hub.opened}`,
          deps,
          aggregate: opts.aggregate,
          apiKey: opts.apiKey,
          requestId: opts.requestId,
          openedAtMs: deps.clock.nowMs(),
          lastSequence: opts.afterSequence,
          controller,
          closed: false,
          keepAliveTimer: undefined,
          cancelStall: undefined,
          pumping: false,
          pumpAgain: false,
          fault: opts.fault && { action: opts.fault, sent: 0, stalled: false },
        }
        hub.streams.set(stream.id, stream)
        let set = hub.byAggregate.get(opts.aggregate.id)
        if (!set) hub.byAggregate.set(opts.aggregate.id, (set = new Set()))
        set.add(stream)
        scheduleKeepAlive(stream)
        write(stream, retryFrame(hub.limits.retryMs))
        if (!applyFault(stream)) pump(stream)
      },
      pull() {
        if (!stream || stream.closed) return
        // The consumer took data: the buffer is below its bound again.
        stream.cancelStall?.()
        stream.cancelStall = undefined
        pump(stream)
      },
      cancel() {
        // The client went away; accepted work goes on (SSE-004).
        if (stream) cleanup(stream)
      },
    },
    { highWaterMark: hub.limits.bufferBytes, size: (chunk) => chunk.byteLength },
  )
  return new Response(body, { status: 200, headers: SSE_HEADERS })
}

/**
 * Writes the stored events after the stream's last sequence while the buffer has room. An enqueue can call
 * pull() synchronously (a read was waiting), so a nested call only asks the running pump for another round.
 */
function pump(stream: Stream): void {
  if (stream.pumping) {
    stream.pumpAgain = true
    return
  }
  stream.pumping = true
  try {
    do {
      stream.pumpAgain = false
      pumpOnce(stream)
    } while (stream.pumpAgain && !stream.closed)
  } finally {
    stream.pumping = false
  }
}

function pumpOnce(stream: Stream): void {
  const { deps } = stream
  let checked = false
  while (!stream.closed && !stream.fault?.stalled) {
    if (!hasRoom(stream)) return stall(stream)
    const since = eventsVisibleSince(deps.clock.nowMs())
    const batch = visibleEventsAfter(
      deps.db,
      stream.aggregate.id,
      stream.lastSequence,
      since,
      BATCH,
    )
    if (batch.length === 0) return
    if (!checked) {
      // AUTH-010: permissions are re-checked before each delivery.
      const problem = accessProblem(deps, stream.apiKey, stream.aggregate)
      if (problem) return fail(stream, problem)
      checked = true
    }
    for (const event of batch) {
      if (stream.closed) return
      if (!hasRoom(stream)) return stall(stream)
      stream.lastSequence = event.sequence
      write(stream, eventFrame(event))
      // SSE-023: the referee remembers the last event this key's stream delivered.
      deps.referee.streamDelivered(stream.apiKey, stream.aggregate, event.event_id, {
        requestId: stream.requestId,
        atMs: stream.openedAtMs,
      })
      if (stream.fault) {
        stream.fault.sent++
        if (stream.fault.action.stream === 'repeat' && stream.fault.sent > afterEvents(stream))
          write(stream, eventFrame(event))
        if (applyFault(stream)) return
      }
    }
  }
}

const hasRoom = (stream: Stream): boolean => (stream.controller.desiredSize ?? 0) > 0

function write(stream: Stream, frame: string): void {
  if (stream.closed) return
  if (!hasRoom(stream)) return stall(stream)
  stream.controller.enqueue(encoder.encode(frame))
  if (!hasRoom(stream)) stall(stream)
}

const afterEvents = (stream: Stream): number => stream.fault?.action.after_events ?? 0

/**
 * A stream fault once its events are sent: `close` ends the stream (no error frame), `error` sends the error
 * frame of its code (default INTERNAL_ERROR, retryable false) and closes, `stall` stops every frame. True when
 * the stream sends nothing more.
 */
function applyFault(stream: Stream): boolean {
  const fault = stream.fault
  if (!fault || fault.action.stream === 'repeat' || fault.sent < afterEvents(stream)) return false
  if (fault.action.stream === 'stall') {
    fault.stalled = true
    return true
  }
  if (fault.action.stream === 'error') {
    fail(
      stream,
      faultError({ error: fault.action.code ?? 'INTERNAL_ERROR' }, stream.deps.clock.nowMs()),
    )
    return true
  }
  cleanup(stream)
  stream.controller.close()
  return true
}

/** The buffer is full: the consumer has the send limit to read, else it is disconnected. */
function stall(stream: Stream): void {
  if (stream.closed || stream.cancelStall) return
  stream.cancelStall = wallTimeout(stream.deps.streams.limits.sendLimitMs, () => {
    stream.cancelStall = undefined
    if (stream.closed) return
    stream.deps.log.info('sse consumer too slow, disconnected', {
      request_id: stream.requestId,
      aggregate_id: stream.aggregate.id,
    })
    cleanup(stream)
    // Erroring the body makes the HTTP server destroy the connection instead of draining the buffer.
    stream.controller.error(new Error('SSE consumer too slow'))
  })
}

/** An error after the stream started: one error frame without id, then the stream closes (SSE-020). */
function fail(stream: Stream, error: ApiError): void {
  if (stream.closed) return
  const envelope = errorEnvelope(error, stream.requestId)
  const full = !hasRoom(stream)
  cleanup(stream)
  if (full) {
    stream.controller.error(new Error(`SSE stream closed: ${error.code}`))
    return
  }
  stream.controller.enqueue(encoder.encode(errorFrame(envelope)))
  stream.controller.close()
}

function scheduleKeepAlive(stream: Stream): void {
  if (stream.closed || !stream.deps.db.raw.open) return
  const due = stream.deps.clock.nowMs() + stream.deps.streams.limits.keepAliveMs
  stream.keepAliveTimer = stream.deps.scheduler.schedule(
    KEEP_ALIVE_KIND,
    due,
    { stream: stream.id },
    { subject: stream.id },
  )
}

/** A world reset deletes every timer row: streams opened before it get their keep-alive back. */
function reviveKeepAlives(hub: StreamHub): void {
  for (const s of hub.streams.values()) {
    if (
      s.keepAliveTimer !== undefined &&
      s.deps.db.raw.open &&
      !getTimer(s.deps.db, s.keepAliveTimer)
    )
      scheduleKeepAlive(s)
  }
}

function cleanup(stream: Stream): void {
  if (stream.closed) return
  stream.closed = true
  stream.cancelStall?.()
  stream.cancelStall = undefined
  const hub = stream.deps.streams
  hub.streams.delete(stream.id)
  const set = hub.byAggregate.get(stream.aggregate.id)
  set?.delete(stream)
  if (set?.size === 0) hub.byAggregate.delete(stream.aggregate.id)
  if (stream.keepAliveTimer !== undefined && stream.deps.db.raw.open)
    stream.deps.scheduler.cancel(stream.keepAliveTimer)
  stream.keepAliveTimer = undefined
}

/** Number of open streams (tests, diagnostics). */
export const openStreamCount = (deps: Deps): number => deps.streams.streams.size
