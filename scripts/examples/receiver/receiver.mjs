/* global process, Buffer */
// A webhook receiver that imports only `ai-employee-mock/receiver` (no Hono, SQLite or YAML parser): it
// checks each delivery's Service-Signature against the signing secret on the receiver's own wall clock, and
// drops redeliveries by event_id. Start the mock with `--clock-start now` so its signatures carry wall time.
//   node receiver.mjs [port]       prints `receiver listening on <port>`; reads the secret from stdin's
//                                  first line; prints one JSON line per delivery
import { createServer } from 'node:http'
import { createInterface } from 'node:readline'
import { Deduplicator, SIGNATURE_HEADER, verifySignature } from 'ai-employee-mock/receiver'

let secret
createInterface({ input: process.stdin }).once('line', (line) => {
  secret = line.trim()
})
const dedup = new Deduplicator()

const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const rawBody = Buffer.concat(chunks)
    const verdict = verifySignature({
      header: req.headers[SIGNATURE_HEADER.toLowerCase()],
      rawBody,
      secrets: secret ? [secret] : [],
      nowS: Math.floor(Date.now() / 1000),
    })
    if (!verdict.ok) {
      process.stdout.write(`${JSON.stringify({ ok: false, reason: verdict.reason })}\n`)
      res.writeHead(400).end()
      return
    }
    const event = JSON.parse(rawBody.toString('utf8'))
    const seen = dedup.seen(event.event_id, rawBody)
    process.stdout.write(`${JSON.stringify({ ok: true, seen, type: event.type, t: verdict.t })}\n`)
    res.writeHead(204).end()
  })
})
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`receiver listening on ${server.address().port}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
