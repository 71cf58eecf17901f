/**
 * The artifact and download checks on a real target (issue #35): the suite's files run against a mock over HTTP
 * dressed as a real deployment, behind a loopback proxy on 127.0.0.1 that hides its control API (/_mock answers
 * 404), with the world given by a world file (TARGET_WORLD) naming `deployments.fileOutput`, a Deployment whose
 * executions produce a FILE output. The mock plays such a deployment: before the proxy is in front, the
 * `file-output` scenario is queued on that Deployment for every execution the run could start (the fixtures
 * give no Deployment another default behaviour, so the rehearsal, CONFORMANCE_REHEARSAL=real, has no such role
 * and skips these checks). Shown: the document's checks run and pass there, the mock-only ones skip, and each
 * test file makes one execution for all its checks.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer } from '../support/target.js'
import { worldFromFixtures, type FixturesBody, type World } from '../support/world.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const VITEST = join(ROOT, 'node_modules', '.bin', 'vitest')
const FILES = [
  'conformance/tests/artifacts/detail.test.ts',
  'conformance/tests/artifacts/downloads.test.ts',
]
// The default fixtures' second ACTIVE Deployment of Project A ("Report writer", a FILE result in its contract).
const FILE_DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000002'

type Seen = { method: string; url: string; status: number }

/** A proxy to the mock without its control API, recording every exchange it forwarded. */
async function proxy(target: string): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const upstream = new URL(target)
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = req.url ?? ''
      if (url.startsWith('/_mock')) {
        res.writeHead(404, { 'content-type': 'application/json' })
        return res.end(JSON.stringify({ error: { code: 'NOT_FOUND' } }))
      }
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: url,
          headers: { ...req.headers, host: upstream.host },
        },
        (up) => {
          seen.push({ method: req.method ?? '', url, status: up.statusCode ?? 0 })
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        },
      )
      out.on('error', () => res.destroy())
      out.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

/** Runs the suite's files as a real target's run would (no control API, paced, spending allowed). */
function runSuite(
  env: Record<string, string>,
  outputFile: string,
): Promise<{ code: number | null; output: string }> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !k.startsWith('VITEST') &&
        !k.startsWith('TARGET_') &&
        !k.startsWith('FC_') &&
        !k.startsWith('CONFORMANCE_'),
    ),
  )
  const child = spawn(
    VITEST,
    ['run', '--project', 'conformance', ...FILES, '--reporter=json', `--outputFile=${outputFile}`],
    { cwd: ROOT, env: { ...inherited, ...env, FORCE_COLOR: '0' } },
  )
  let output = ''
  child.stdout.on('data', (d: Buffer) => (output += d.toString()))
  child.stderr.on('data', (d: Buffer) => (output += d.toString()))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

type JsonReport = {
  testResults: {
    name: string
    assertionResults: { title: string; status: string; failureMessages: string[] }[]
  }[]
}

describe.skipIf(process.env.CONFORMANCE_CLI === '1')(
  'artifact and download checks on a real target with a FILE-output Deployment',
  () => {
    let mock: Awaited<ReturnType<typeof startMockServer>>
    let front: Awaited<ReturnType<typeof proxy>>
    let dir: string
    beforeAll(async () => {
      // Wall time from now, as a real deployment: expires_at is compared with the answers' Date header.
      mock = await startMockServer({ clock: 'realtime', clockStart: 'now', rateLimits: false })
      const queued = await fetch(`${mock.url}/_mock/scenarios`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target_id: FILE_DEPLOYMENT, scenario: 'file-output', times: 20 }),
      })
      expect(queued.status).toBe(201)
      front = await proxy(mock.url)
      dir = mkdtempSync(join(tmpdir(), 'conformance-file-outputs-'))
    })
    afterAll(async () => {
      if (front) {
        front.server.closeAllConnections()
        await new Promise((resolve) => front.server.close(resolve))
      }
      await mock?.close()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    it('[FILE-003][FILE-004][ART-001][ART-005][ART-007][ART-008][AUTH-013][OUT-007] runs the document’s artifact and download checks, one execution per file', async () => {
      const fixtures = (await (await fetch(`${mock.url}/_mock/fixtures`)).json()) as FixturesBody
      const derived = worldFromFixtures(fixtures, Date.now())
      const world: World = {
        ...derived,
        deployments: { ...derived.deployments, fileOutput: FILE_DEPLOYMENT },
      }
      expect(world.deployments.active).not.toBe(FILE_DEPLOYMENT)
      const worldFile = join(dir, 'world.json')
      writeFileSync(worldFile, JSON.stringify(world))
      const reportFile = join(dir, 'report.json')
      const run = await runSuite(
        {
          TARGET_URL: front.url,
          TARGET_WORLD: worldFile,
          TARGET_ALLOW_SPEND: '1',
          // The mock runs without call-rate limits: no need to hold calls back to the document's rates.
          TARGET_CALL_RATES: 'accept=1000,read=10000',
        },
        reportFile,
      )
      const report = JSON.parse(readFileSync(reportFile, 'utf8')) as JsonReport
      const tests = report.testResults.flatMap((f) => f.assertionResults)
      const failed = tests.filter((t) => t.status === 'failed')
      expect(
        failed.map((t) => `${t.title}: ${t.failureMessages.join('\n').slice(0, 400)}`),
        run.output.slice(-3000),
      ).toEqual([])
      expect(run.code, run.output.slice(-3000)).toBe(0)
      const passed = tests.filter((t) => t.status === 'passed').map((t) => t.title)
      const skipped = tests.filter((t) => t.status !== 'passed').map((t) => t.title)
      // The document's rules on the target's own FILE output ran and passed...
      for (const title of [
        /^\[OUT-007\]/,
        /^\[FILE-003\]\[ART-008\]\[RES-001\]/,
        /^\[ART-008\]\[AUTH-004\]/,
        /^\[SVC-002\]\[AUTH-009\]/,
        /^\[AUTH-003\]\[AUTH-009\]/,
        /^\[FILE-004\]\[ART-001\]/,
        /^\[ART-001\]\[AUTH-004\]/,
        /^\[AUTH-013\]\[RES-003\]\[OUT-007\]/,
        /^\[ART-005\]\[FILE-004\] answers 404/,
        /^\[ART-005\]\[FILE-004\] gives a new address/,
        /^\[AUTH-013\] serves nothing/,
        /^\[ART-007\] never answers/,
        /^\[ART-002\]\[AUTH-003\]\[AUTH-009\]/,
        /^\[ART-006\]\[DEL-001\]\[RET-004\]/,
      ])
        expect(
          passed.some((t) => title.test(t)),
          `${String(title)} passed (passed: ${passed.join(' | ')})`,
        ).toBe(true)
      // ...and the checks that need the control API or virtual time were skipped.
      for (const title of [
        /^\[ART-004\] answers 404/,
        /^\[ERR-055\]/,
        /^\[RET-012\]/,
        /^\[ART-003\]/,
      ])
        expect(
          skipped.some((t) => title.test(t)),
          `${String(title)} skipped`,
        ).toBe(true)
      // One execution per test file, serving every check of that file.
      const sessions = front.seen.filter(
        (s) =>
          s.method === 'POST' &&
          /^\/v1\/deployments\/[^/]+\/sessions$/.test(s.url) &&
          s.status === 202,
      )
      // (downloads.test.ts has one more: the deletion check destroys its artifact, so it has its own.)
      expect(sessions.map((s) => s.url)).toEqual(
        [...FILES, 'deletion'].map(() => `/v1/deployments/${FILE_DEPLOYMENT}/sessions`),
      )
      expect(front.seen.some((s) => /\/content\?token=/.test(s.url) && s.status === 200)).toBe(true)
    }, 300_000)
  },
)
