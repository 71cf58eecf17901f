/**
 * A local webhook receiver for rehearsal (`npm run webhook-receiver -- --port 4020 --secret whsec_...`): listens
 * on 127.0.0.1, verifies each notification with the receiver kit (signature, 300-second window, every --secret
 * given, for a rotation), deduplicates by event_id, prints one JSON line per request and answers 204. With
 * --fail it answers 500 after verifying, to rehearse the retry schedule. Register it with a mock started with
 * --allow-insecure-webhooks; pass --mock-url so the time window uses the mock's virtual clock.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { parseArgs } from 'node:util'
import { Deduplicator, verifySignature } from '../mock/webhooks/kit/index.js'

const USAGE = `usage: npm run webhook-receiver -- --secret <secret> [options]
  --port <n>          port on 127.0.0.1 (default 4020)
  --secret <s>        endpoint secret; repeat it during a rotation (old and new)
  --fail              answer 500 after verification (rehearse retries)
  --mock-url <url>    read "now" from the mock's virtual clock (GET <url>/_mock/clock) instead of this machine's
  --path <p>          only this path is a webhook endpoint (default: any path)
  --help              this text`

/** Rule 1: a notification body is at most 4 KiB; a little slack before refusing outright. */
const MAX_BODY_BYTES = 64 * 1024

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`)
  process.exit(2)
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.byteLength
      if (size > MAX_BODY_BYTES) {
        resolve(undefined)
        req.destroy()
      } else chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

async function main(): Promise<void> {
  let values
  try {
    ;({ values } = parseArgs({
      options: {
        port: { type: 'string', default: '4020' },
        secret: { type: 'string', multiple: true },
        fail: { type: 'boolean', default: false },
        'mock-url': { type: 'string' },
        path: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid --port "${values.port}"`)
  const secrets = values.secret ?? []
  if (secrets.length === 0)
    fail('--secret is required (the secret shown when the endpoint was registered)')
  const mockUrl = values['mock-url']?.replace(/\/$/, '')

  /** Unix seconds now: the mock's virtual clock when --mock-url is given, else this machine's clock. */
  const nowMs = async (): Promise<number> => {
    if (!mockUrl) return Date.now()
    const res = await fetch(`${mockUrl}/_mock/clock`, {
      redirect: 'error',
      signal: AbortSignal.timeout(5000),
    })
    const body = (await res.json()) as { now: string }
    return Date.parse(body.now)
  }
  let lastNowMs = 0
  const dedup = new Deduplicator({ now: () => lastNowMs })

  const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`)

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const reply = (status: number, verdict: string, extra: Record<string, unknown> = {}) => {
      print({
        at: new Date(lastNowMs).toISOString(),
        answered: status,
        verdict,
        path: req.url,
        ...extra,
      })
      res.writeHead(status).end()
    }
    if (req.method !== 'POST' || (values.path && req.url !== values.path)) {
      res.writeHead(404).end()
      return
    }
    const raw = await readBody(req)
    lastNowMs = await nowMs()
    if (!raw) return reply(413, 'body-too-large')
    // 1. Verify over the raw bytes before anything else.
    const header = req.headers['service-signature']
    const verified = verifySignature({
      header: typeof header === 'string' ? header : undefined,
      rawBody: raw,
      secrets,
      nowS: Math.floor(lastNowMs / 1000),
    })
    if (!verified.ok) return reply(401, verified.reason)
    let notice: Record<string, unknown>
    try {
      notice = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
    } catch {
      return reply(400, 'not-json')
    }
    const summary = {
      event_id: notice.event_id,
      type: notice.type,
      status: notice.status,
      session_id: notice.session_id,
      turn_id: notice.turn_id,
      run_id: notice.run_id,
      t: verified.t,
    }
    // 2. Deduplicate by event_id: a duplicate gets a 2xx too; another body under a known id is rejected.
    const seen = dedup.seen(String(notice.event_id), raw)
    if (seen === 'conflict') return reply(409, 'conflict', summary)
    // 3. (A real receiver stores the notice here, then re-reads the state with its own key from the ids.)
    if (values.fail) {
      dedup.forget(String(notice.event_id))
      return reply(500, `${seen}, answering 500 (--fail)`, summary)
    }
    return reply(204, seen, summary)
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`)
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  server.on('error', (error) => {
    process.stderr.write(`cannot listen: ${error.message}\n`)
    process.exit(1)
  })
  server.listen(port, '127.0.0.1', () => {
    const address = server.address()
    const actual = typeof address === 'object' && address ? address.port : port
    process.stdout.write(
      `webhook receiver listening on http://127.0.0.1:${actual} (${secrets.length} secret(s)${values.fail ? ', answering 500' : ''}${mockUrl ? `, clock from ${mockUrl}` : ''})\n`,
    )
  })
  const stop = () => server.close(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

void main()
