/**
 * GET /_mock/stream: the control API's change feed as server-sent events, for the inspector page and any
 * other tool. It opens with `retry: 1000` and a `clock` event (virtual now and mode); then, as things change,
 * `execution`, `event`, `webhook`, `request` and `control` events (README "Inspector"), each with an
 * increasing `id`, `overflow` when changes were dropped, and `clock` after a batch in which time moved. The data
 * carry ids, statuses, types and paths, never a key, token, secret or body. A consumer that stops reading is
 * disconnected once 1 MiB waits for it (it reconnects and re-reads the state).
 */
import type { Deps } from '../deps.js'
import type { ChangeBatch } from './change-feed.js'

/** Bytes left unread before the stream is closed. */
export const STREAM_BUFFER_BYTES = 1024 * 1024

const encoder = new TextEncoder()

const frame = (event: string, data: unknown, id?: number): Uint8Array =>
  encoder.encode(
    `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
  )

const clockData = (deps: Deps) => ({ now: deps.clock.iso(), mode: deps.clock.mode })

/** Opens one change stream: the 200 answer whose body is the SSE frames. */
export function openChangeStream(deps: Deps): Response {
  let stop: (() => void) | undefined
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode('retry: 1000\n\n'))
        controller.enqueue(frame('clock', clockData(deps)))
        const send = (chunk: Uint8Array): boolean => {
          if ((controller.desiredSize ?? 0) < 0) {
            stop?.()
            try {
              controller.close()
            } catch {
              // already closed
            }
            return false
          }
          controller.enqueue(chunk)
          return true
        }
        stop = deps.changes.watch(
          (batch: ChangeBatch) => {
            for (const change of batch.changes) {
              if (!send(frame(change.topic, change.data, change.seq))) return
            }
            if (batch.dropped > 0 && !send(frame('overflow', { dropped: batch.dropped }))) return
            // The time after the batch's changes (an advance may fire many timers before a batch goes out).
            if (batch.clock) send(frame('clock', clockData(deps)))
          },
          () => {
            try {
              controller.close()
            } catch {
              // already closed by its consumer
            }
          },
        )
      },
      cancel() {
        stop?.()
      },
    },
    { highWaterMark: STREAM_BUFFER_BYTES, size: (chunk) => chunk.byteLength },
  )
  return new Response(body, {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'X-Accel-Buffering': 'no' },
  })
}
