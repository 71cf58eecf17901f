/**
 * A deliberately naive client, for tests and the rehearsal script only (never part of the package): what
 * the document's client rules warn against. It resends at once (Retry-After ignored, retryable false too),
 * sends a new Idempotency-Key after a network failure, polls every half second, reopens a cut stream from the
 * start without the last id, and keeps no record of events seen. The referee (GET /_mock/referee) catches it.
 */

export type NaiveOptions = {
  baseUrl: string
  apiKey: string
  deploymentId: string
  /** Its waits (a test moves the mock's virtual clock). */
  sleep: (ms: number) => Promise<void>
}

type TurnView = { status: string }

export class NaiveClient {
  private keys = 0
  constructor(private readonly opts: NaiveOptions) {}

  private async send(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    let key = body === undefined ? undefined : `naive-${Date.now()}-${++this.keys}`
    for (let attempt = 0; attempt < 8; attempt++) {
      try {
        const res = await fetch(`${this.opts.baseUrl}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${this.opts.apiKey}`,
            ...(key === undefined
              ? {}
              : { 'Idempotency-Key': key, 'Content-Type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
        if (res.ok) return res
        await res.body?.cancel()
      } catch {
        // "The request failed, so send a new one."
        if (key !== undefined) key = `naive-${Date.now()}-${++this.keys}`
      }
    }
    throw new Error(`naive: gave up on ${method} ${path}`)
  }

  /** Creates a Session, polls its Turn to the end, follows its events to turn.completed. */
  async job(): Promise<void> {
    const receipt = (await (
      await this.send('POST', `/v1/deployments/${this.opts.deploymentId}/sessions`, {
        input: [{ type: 'TEXT', text: 'the job' }],
      })
    ).json()) as { status_url: string; events_url: string }
    for (let i = 0; i < 40; i++) {
      const turn = (await (await this.send('GET', receipt.status_url)).json()) as TurnView
      if (turn.status === 'SUCCEEDED' || turn.status === 'FAILED') break
      await this.opts.sleep(500)
    }
    // Follow the stream until the Turn's end, reopening from the start after every cut.
    for (let i = 0; i < 8; i++) {
      const res = await this.send('GET', receipt.events_url, undefined, {
        Accept: 'text/event-stream',
      }).catch(() => undefined)
      if (!res?.body) continue
      const text = await readUntil(res.body, 'turn.completed')
      if (text.includes('event: turn.completed')) return
    }
  }
}

/** Reads a stream until `event: <marker>` appears or the stream ends. */
async function readUntil(body: ReadableStream<Uint8Array>, marker: string): Promise<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return text
      text += value
      if (text.includes(`event: ${marker}`)) return text
    }
  } catch {
    return text
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}
