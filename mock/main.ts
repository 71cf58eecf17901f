#!/usr/bin/env node
/**
 * The CLI: `npm start -- [--port n] [--host h] [--clock manual|realtime] [--clock-start now|<ISO>] [--seed s]
 * [--db file] [--fixtures file] [--allow-insecure-webhooks] [--webhook-ca file] [--no-rate-limits] [--durable]
 * [--control-token t] [--forward-compat] [--quiet] [--version]`, also the package's bin (`npx ai-employee-mock`). Serves the mock over
 * HTTP (mock/server.ts) in this process: stopping this process by its pid (SIGTERM, SIGINT) closes the server.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { loadOpenApi, PACKAGE_VERSION } from '../spec/index.js'
import { CLOCK_MODES, parseClockStart, type ClockMode } from './clock/clock.js'
import { startedByNpm, watchParent } from './clock/parent-watch.js'
import { createMock } from './index.js'
import { jsonLog, withoutRequestLines } from './util/log.js'

const USAGE = `usage: npm start -- [options]   (or: npx ai-employee-mock [options])
  --port <n>                  port (default: $PORT or 4010)
  --host <host>               address to listen on (default 127.0.0.1)
  --clock manual|realtime     virtual clock mode at start and after a reset (default realtime)
  --clock-start now|<ISO>     virtual time at start and after a reset: the wall clock's now, or an instant
                              such as 2026-11-02T09:00:00Z (default: the fixture world's clock_start)
  --seed <text>               seed of the record-id sequence (default "mock"); a reset rewinds it
  --db <file>                 keep state in this SQLite file (default: in memory)
  --fixtures <file>           fixture world to load (default fixtures/default-world.json)
  --allow-insecure-webhooks   allow http:// and loopback webhook endpoints (local rehearsal only)
  --webhook-ca <file>         PEM certificates webhook sends trust beside the default root CAs (a local
                              HTTPS receiver's CA or self-signed certificate; still verified)
  --no-rate-limits            do not apply call-rate limits
  --durable                   with --db: sync every commit to disk (survives power loss; slower)
  --control-token <token>     the control API (/_mock) then needs Authorization: Bearer <token>
                              (default: $MOCK_CONTROL_TOKEN, else open for local use)
  --forward-compat            behave like a later minor version: unknown response fields, event types,
                              content kinds and error codes (POST /_mock/forward-compat switches it)
  --quiet                     no request log (errors and other events are still logged)
  --version                   the mock's version and the interface version it simulates
  --help                      this text`

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`)
  process.exit(2)
}

/** The PEM text of --webhook-ca, or a usage error when the file cannot be read or holds no certificate. */
function readCa(file: string): string {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    fail(
      `cannot read --webhook-ca "${file}": ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    fail(`--webhook-ca "${file}" holds no PEM certificate`)
  return text
}

async function main(): Promise<void> {
  // The parent the process started with: under npm the watch below stops the server once it is gone, even if
  // it went before the watch began (a client that reads "listening on" may stop npm at once).
  const parentAtStart = process.ppid
  let values
  try {
    ;({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        clock: { type: 'string', default: 'realtime' },
        'clock-start': { type: 'string' },
        seed: { type: 'string' },
        db: { type: 'string' },
        fixtures: { type: 'string' },
        'allow-insecure-webhooks': { type: 'boolean', default: false },
        'webhook-ca': { type: 'string' },
        'no-rate-limits': { type: 'boolean', default: false },
        durable: { type: 'boolean', default: false },
        'control-token': { type: 'string' },
        'forward-compat': { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
        version: { type: 'boolean', default: false },
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
  if (values.version) {
    process.stdout.write(
      `ai-employee-mock ${PACKAGE_VERSION} (interface version ${loadOpenApi().info.version})\n`,
    )
    return
  }
  const portText = values.port ?? process.env.PORT ?? '4010'
  const port = Number(portText)
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid port "${portText}"`)
  if (!(CLOCK_MODES as readonly string[]).includes(values.clock))
    fail(`invalid --clock "${values.clock}"`)
  const clockStart = values['clock-start']
  if (clockStart !== undefined && parseClockStart(clockStart) === undefined)
    fail(`invalid --clock-start "${values['clock-start']}" (now, or an ISO 8601 time with a zone)`)
  if (values.seed !== undefined && values.seed.length === 0) fail('--seed needs a value')
  const webhookCa = values['webhook-ca'] === undefined ? undefined : readCa(values['webhook-ca'])

  let mock
  try {
    mock = await createMock({
      fixtures: values.fixtures,
      db: values.db,
      clock: values.clock as ClockMode,
      clockStart,
      seed: values.seed,
      allowInsecureWebhooks: values['allow-insecure-webhooks'],
      webhookCa,
      rateLimits: !values['no-rate-limits'],
      durable: values.durable,
      controlToken: values['control-token'] ?? (process.env.MOCK_CONTROL_TOKEN || undefined),
      forwardCompat: values['forward-compat'],
      log: values.quiet ? withoutRequestLines(jsonLog()) : true,
    })
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
  const started = mock

  let served
  try {
    served = await started.listen({ port, host: values.host })
  } catch (error) {
    process.stderr.write(
      `cannot listen: ${error instanceof Error ? error.message : String(error)}\n`,
    )
    started.close()
    process.exit(1)
  }
  const { server, url } = served
  const lines = [`listening on ${url}`]
  lines.push(
    `clock ${started.clock.mode} at ${started.clock.now().toISOString()}; state ${values.db ?? 'in memory'}`,
  )
  for (const p of started.fixtures().projects) {
    lines.push(`  project ${p.name} ${p.id}${p.approved ? '' : ' (not approved)'}`)
    for (const k of p.api_keys)
      lines.push(
        `    key ${k.key}  ${k.scopes.length} scopes, ${k.deployment_ids.length} deployments`,
      )
  }
  process.stdout.write(`${lines.join('\n')}\n`)

  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    process.stdout.write(`${signal}: stopping\n`)
    server.close(() => {
      started.close()
      process.exit(0)
    })
    // Open keep-alive and streaming connections must not hold the exit.
    server.closeAllConnections()
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  // Under npm (npm start, npx), `kill <npm's pid>` must stop the server too: npm does not pass SIGTERM on.
  if (startedByNpm(process.env))
    watchParent(() => stop('parent process gone'), undefined, undefined, parentAtStart)
}

await main()
