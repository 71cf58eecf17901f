/**
 * Open SSE streams (Events > SSE streams): replay of stored events after the cursor, then live events of the
 * same Session or Run once the appending transaction has committed, a `: keep-alive` comment every 15 s of
 * virtual time, permission re-checks on every delivery and keep-alive (AUTH-010), an error frame then close,
 * and a bounded buffer: a consumer that leaves it full for about 10 s of wall time is disconnected (SSE-022).
 * A stream never touches the execution: closing it cancels nothing (SSE-004).
 */
import { setImmediate } from 'node:timers'
import { wallTimeout } from '../clock/wall-timeout.js'
import type { Deps } from '../deps.js'
import type { ApiError } from '../errors.js'
import { getTimer } from '../store/timers.js'
import { accessProblem, type Aggregate } from './access.js'
import { KEEP_ALIVE_KIND, setKeepAliveHandler } from './keep-alive-kind.js'
import { eventsVisibleSince } from '../domain/retention.js'
import { onEventAppended, visibleEventsAfter } from './log.js'
import { errorFrame, eventFrame, KEEP_ALIVE_FRAME } from './public.js'

/** Stream limits; unit tests may lower them. */
export const sseLimits = {
  /** Virtual ms between keep-alive comments (Time limits: about every 15 seconds). */
  keepAliveMs: 15_000,
  /** Wall ms a full buffer may stay unread before the consumer is disconnected (about 10 seconds). */
  sendLimitMs: 10_000,
  /** Bytes queued for one consumer beyond what the socket took (the bound of "does not buffer without bound"). */
  bufferBytes: 64 * 1024,
}

/** Events read from the store per query while replaying or delivering. */
const BATCH = 100

type Stream = {
  id: string
  deps: Deps
  aggregate: Aggregate
  apiKey: string
  requestId: string
  /** Sequence of the last event written to this stream. */
  lastSequence: number
  controller: ReadableStreamDefaultController<Uint8Array>
  closed: boolean
  keepAliveTimer: string | undefined
  cancelStall: (() => void) | undefined
  pumping: boolean
  pumpAgain: boolean
}

type Hub = {
  streams: Map<string, Stream>
  byAggregate: Map<string, Set<Stream>>
  /** Aggregates with appended events waiting for the post-commit flush. */
  dirty: Set<string>
  flushQueued: boolean
}

const hubs = new WeakMap<Deps, Hub>()
const encoder = new TextEncoder()
let streamCounter = 0

function hubOf(deps: Deps): Hub {
  let hub = hubs.get(deps)
  if (!hub) {
    hub = { streams: new Map(), byAggregate: new Map(), dirty: new Set(), flushQueued: false }
    hubs.set(deps, hub)
  }
  return hub
}

// Appends run inside the writer's transaction: note the aggregate, deliver from the store after commit (a
// microtask runs only once the synchronous transaction has finished; a rolled-back event is never read).
onEventAppended((deps, event) => {
  const hub = hubs.get(deps)
  if (!hub?.byAggregate.has(event.aggregate_id)) return
  hub.dirty.add(event.aggregate_id)
  if (hub.flushQueued) return
  hub.flushQueued = true
  queueMicrotask(() => {
    hub.flushQueued = false
    const dirty = [...hub.dirty]
    hub.dirty.clear()
    for (const id of dirty) for (const s of [...(hub.byAggregate.get(id) ?? [])]) pump(s)
  })
})

setKeepAliveHandler((deps, streamId) => {
  const stream = hubs.get(deps)?.streams.get(streamId)
  if (!stream || stream.closed) return
  stream.keepAliveTimer = undefined
  const problem = accessProblem(deps, stream.apiKey, stream.aggregate)
  if (problem) return fail(stream, problem)
  write(stream, KEEP_ALIVE_FRAME)
  // The next keep-alive is scheduled once this advance is over (a macrotask later), so one long manual
  // advance gives one keep-alive per stream instead of a timer chain that would trip the loop limit.
  setImmediate(() => scheduleKeepAlive(stream))
})

export type OpenStreamOptions = {
  aggregate: Aggregate
  apiKey: string
  /** The request id of the stream's request, for error frames. */
  requestId: string
  /** Replay starts after this sequence (0: from the first event still within retention). */
  afterSequence: number
}

/** Opens a stream: the 200 response whose body is the SSE frames. */
export function openStream(deps: Deps, opts: OpenStreamOptions): Response {
  const hub = hubOf(deps)
  reviveKeepAlives(hub)
  let stream: Stream | undefined
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        streamCounter += 1
        stream = {
          id: `sse-${process.pid}-${streamCounter}`,
          deps,
          aggregate: opts.aggregate,
          apiKey: opts.apiKey,
          requestId: opts.requestId,
          lastSequence: opts.afterSequence,
          controller,
          closed: false,
          keepAliveTimer: undefined,
          cancelStall: undefined,
          pumping: false,
          pumpAgain: false,
        }
        hub.streams.set(stream.id, stream)
        let set = hub.byAggregate.get(opts.aggregate.id)
        if (!set) hub.byAggregate.set(opts.aggregate.id, (set = new Set()))
        set.add(stream)
        scheduleKeepAlive(stream)
        pump(stream)
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
    { highWaterMark: sseLimits.bufferBytes, size: (chunk) => chunk.byteLength },
  )
  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'X-Accel-Buffering': 'no',
    },
  })
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
  while (!stream.closed) {
    if (!hasRoom(stream)) return stall(stream)
    const since = eventsVisibleSince(deps.clock.nowMs())
    const batch = visibleEventsAfter(deps, stream.aggregate.id, stream.lastSequence, since, BATCH)
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

/** The buffer is full: the consumer has the send limit to read, else it is disconnected. */
function stall(stream: Stream): void {
  if (stream.closed || stream.cancelStall) return
  stream.cancelStall = wallTimeout(sseLimits.sendLimitMs, () => {
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
  const envelope = {
    error: {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      request_id: stream.requestId,
      details: error.details,
    },
  }
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
  const due = stream.deps.clock.nowMs() + sseLimits.keepAliveMs
  stream.keepAliveTimer = stream.deps.scheduler.schedule(
    KEEP_ALIVE_KIND,
    due,
    { stream: stream.id },
    { subject: stream.id },
  )
}

/** A world reset deletes every timer row: streams opened before it get their keep-alive back. */
function reviveKeepAlives(hub: Hub): void {
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
  const hub = hubs.get(stream.deps)
  hub?.streams.delete(stream.id)
  const set = hub?.byAggregate.get(stream.aggregate.id)
  set?.delete(stream)
  if (set?.size === 0) hub?.byAggregate.delete(stream.aggregate.id)
  if (stream.keepAliveTimer !== undefined && stream.deps.db.raw.open)
    stream.deps.scheduler.cancel(stream.keepAliveTimer)
  stream.keepAliveTimer = undefined
}

/** Number of open streams (tests, diagnostics). */
export const openStreamCount = (deps: Deps): number => hubs.get(deps)?.streams.size ?? 0
