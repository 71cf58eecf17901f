/**
 * Following an SSE stream of a Session or Run (Events > SSE streams) for the reference client: frames parsed
 * by eventsource-parser; keep-alive comments ignored (SSE-010); each event handed on once, duplicates dropped by
 * event_id (SSE-016), no order inferred from ids (SSE-007); a cut connection or a retryable `event: error`
 * frame reconnects with the last processed id in Last-Event-ID (SSE-021, SSE-023) after backoff; a
 * non-retryable error frame ends the follow; EVENT_CURSOR_EXPIRED is recovered by reading state_url, then
 * items_url, then reopening without a cursor (SSE-018).
 */
import { createParser } from 'eventsource-parser'
import type { ReferenceClient, ServiceEvent } from './client.js'
import { ServiceError } from './errors.js'
import { mayRetry, retryDelayMs } from './retry.js'

export type FollowOptions = {
  /** Resume after this event id (the last one processed earlier). */
  lastEventId?: string
}

type FrameError = { code?: string; retryable?: boolean; message?: string }

/** How one connection ended. */
type Ended = { kind: 'stopped' } | { kind: 'cut' } | { kind: 'error-frame'; error: FrameError }

export async function followEvents(
  client: ReferenceClient,
  eventsUrl: string,
  onEvent: (event: ServiceEvent) => boolean | void,
  opts: FollowOptions = {},
): Promise<{ lastEventId: string | undefined }> {
  const seen = new Set<string>()
  let lastEventId = opts.lastEventId
  let failures = 0
  let waited = 0
  for (;;) {
    let res: Response
    try {
      res = await client.send('GET', eventsUrl, {
        headers: {
          Accept: 'text/event-stream',
          ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
        },
      })
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'EVENT_CURSOR_EXPIRED') {
        // SSE-018: read the state, then the items, then reopen without a cursor.
        const details = error.envelope?.error.details as
          { state_url?: string; items_url?: string } | undefined
        if (details?.state_url) await client.request('GET', details.state_url)
        if (details?.items_url) await client.request('GET', details.items_url)
        lastEventId = undefined
        continue
      }
      throw error
    }
    let progressed = false
    const ended = await readConnection(res, (event) => {
      progressed = true
      lastEventId = event.event_id
      if (seen.has(event.event_id)) return false
      seen.add(event.event_id)
      return onEvent(event) === true
    })
    if (ended.kind === 'stopped') return { lastEventId }
    if (ended.kind === 'error-frame' && ended.error.retryable !== true) {
      throw new ServiceError(200, ended.error.code, false, undefined, failures + 1)
    }
    // A cut or a retryable error frame: reconnect with the last id, after backoff (capped like any retry).
    failures = progressed ? 1 : failures + 1
    const delay = retryDelayMs(client.policy, failures, undefined, client.random)
    if (!mayRetry(client.policy, failures, waited, delay))
      throw new ServiceError(
        200,
        ended.kind === 'cut' ? undefined : ended.error.code,
        true,
        undefined,
        failures,
      )
    await client.wait(delay)
    waited += delay
  }
}

/** Reads one connection's frames until the handler says stop, the stream ends, or an error frame arrives. */
async function readConnection(
  res: Response,
  handle: (event: ServiceEvent) => boolean,
): Promise<Ended> {
  if (!res.body) return { kind: 'cut' }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let ended: Ended | undefined
  const parser = createParser({
    onEvent(message) {
      if (ended) return
      if (message.event === 'error') {
        const parsed = safeJson(message.data) as { error?: FrameError } | undefined
        ended = { kind: 'error-frame', error: parsed?.error ?? {} }
        return
      }
      const event = safeJson(message.data) as ServiceEvent | undefined
      // Frames without an id or an event_id are not events of the document: ignored.
      if (!event || typeof event.event_id !== 'string') return
      if (handle(event)) ended = { kind: 'stopped' }
    },
  })
  try {
    while (!ended) {
      let chunk: Awaited<ReturnType<typeof reader.read>>
      try {
        chunk = await reader.read()
      } catch {
        return { kind: 'cut' }
      }
      if (chunk.done) return { kind: 'cut' }
      parser.feed(chunk.value)
    }
    return ended
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
