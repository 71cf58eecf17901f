/**
 * The CLI on a real target: it ends the executions it started, at the end of the run and when it receives SIGINT
 * or SIGTERM (then it exits non-zero); its summary and report say what the spending budget left out. The mock over HTTP plays the deployment behind a loopback proxy on 127.0.0.1 that
 * hides its control API (/_mock answers 404), so the CLI sees a real target; the world is given by the flags.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer } from '../support/target.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx')
// The mock's fixtures (GET /_mock/fixtures): Project A's full key and its available workflow.
const KEY = 'sk_test_a_full'
const WORKFLOW = 'aaaaaaaa-f000-4000-8000-000000000001'

type Seen = {
  method: string
  url: string
  idem?: string
  body: string
  status: number
  answer: string
}

/** A proxy to the mock without its control API; onAnswer sees each exchange once answered. */
async function proxy(
  target: string,
  onAnswer: (s: Seen, all: Seen[]) => void,
): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const upstream = new URL(target)
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const s: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        body: body.toString('utf8'),
        status: 0,
        answer: '',
      }
      const idem = req.headers['idempotency-key']
      if (typeof idem === 'string') s.idem = idem
      if (s.url.startsWith('/_mock')) {
        res.writeHead(404, { 'content-type': 'application/json' })
        return res.end(JSON.stringify({ error: { code: 'NOT_FOUND' } }))
      }
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          const answer: Buffer[] = []
          up.on('data', (c: Buffer) => answer.push(c))
          up.pipe(res)
          up.on('end', () => {
            s.status = up.statusCode ?? 0
            s.answer = Buffer.concat(answer).toString('utf8')
            seen.push(s)
            onAnswer(s, seen)
          })
        },
      )
      out.on('error', () => res.destroy())
      out.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

function cli(args: string[]): {
  child: ChildProcess
  done: Promise<{ code: number | null; stdout: string; stderr: string }>
} {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('VITEST') && !k.startsWith('TARGET_') && !k.startsWith('FC_'),
    ),
  )
  const child = spawn(TSX, ['conformance/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...env, NODE_ENV: 'production', FORCE_COLOR: '0' },
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    },
  )
  return { child, done }
}

const SIGNALS: [NodeJS.Signals, number][] = [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]

const runCreated = (s: Seen) =>
  s.method === 'POST' && /^\/v1\/workflows\/[^/]+\/runs$/.test(s.url) && s.status === 202
const cancels = (seen: Seen[]) => seen.filter((s) => /^\/v1\/runs\/[^/]+\/cancel$/.test(s.url))

describe.skipIf(process.env.CONFORMANCE_CLI === '1')(
  'the CLI ends the executions it started',
  () => {
    let mock: Awaited<ReturnType<typeof startMockServer>>
    let dir: string
    const servers: Server[] = []
    beforeAll(async () => {
      mock = await startMockServer({ clock: 'realtime' })
      dir = mkdtempSync(join(tmpdir(), 'conformance-cleanup-'))
    })
    afterEach(async () => {
      for (const s of servers.splice(0)) {
        s.closeAllConnections()
        await new Promise((resolve) => s.close(resolve))
      }
    })
    afterAll(async () => {
      await mock?.close()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    const args = (url: string, spend = true) => [
      '--base-url',
      url,
      '--api-key',
      KEY,
      '--workflow',
      WORKFLOW,
      ...(spend ? ['--allow-spend'] : []),
      '--only',
      'RUN-014',
      '--report-dir',
      dir,
    ]

    it('without --allow-spend, says which requirements the budget left out (summary and report)', async () => {
      const p = await proxy(mock.url, () => {})
      servers.push(p.server)
      const run = await cli(args(p.url, false)).done
      expect(p.seen.filter(runCreated)).toEqual([])
      expect(run.stdout).toMatch(
        /^left out by the budget: [1-9]\d* requirements \([1-9]\d* tests: needs --allow-spend\)$/m,
      )
      const report = JSON.parse(readFileSync(join(dir, 'requirements.json'), 'utf8')) as {
        budget: { requirements: number }
        requirements: { id: string; state: string; budget: string[] }[]
      }
      expect(report.requirements.find((r) => r.id === 'RUN-014')).toMatchObject({
        state: 'skipped',
        budget: ['needs --allow-spend'],
      })
      expect(readFileSync(join(dir, 'requirements.md'), 'utf8')).toMatch(
        /\| RUN-014 \| real \| skipped \| [^|]+ \| left out by the budget \(needs --allow-spend\)/,
      )
    }, 240_000)

    it('cancels the Runs it started at the end of the run (Idempotency-Key, {} body)', async () => {
      const p = await proxy(mock.url, () => {})
      servers.push(p.server)
      const run = await cli(args(p.url)).done
      const created = p.seen.filter(runCreated)
      expect(created.length, `${run.stdout}\n${run.stderr}`).toBeGreaterThan(0)
      const runIds = created.map((s) => (JSON.parse(s.answer) as { run_id: string }).run_id)
      const canceled = cancels(p.seen)
      expect(canceled.map((c) => c.url).sort()).toEqual(
        [...new Set(runIds)].map((id) => `/v1/runs/${id}/cancel`).sort(),
      )
      for (const c of canceled) {
        expect(c.method).toBe('POST')
        expect(c.body).toBe('{}')
        expect(c.idem).toMatch(/\S/)
      }
      expect(run.stdout).toMatch(/conformance: cleanup: \d+ Runs canceled, /)
    }, 240_000)

    it.for(SIGNALS)(
      'on %s cancels the Runs it started, then exits %i',
      { timeout: 240_000 },
      async ([signal, status]) => {
        let signaled = false
        const spawned: { child?: ChildProcess } = {}
        // The first answer after a Run was accepted (the test reading its Run): the CLI's ledger knows the Run.
        const p = await proxy(mock.url, (s, all) => {
          if (signaled || runCreated(s) || !all.some(runCreated)) return
          signaled = true
          spawned.child?.kill(signal)
        })
        servers.push(p.server)
        const started = cli(args(p.url))
        spawned.child = started.child
        const run = await started.done
        expect(signaled, `${run.stdout}\n${run.stderr}`).toBe(true)
        expect(run.code).toBe(status)
        expect(run.stderr).toContain(`conformance: ${signal}: stopping`)
        const runId = (JSON.parse(p.seen.find(runCreated)!.answer) as { run_id: string }).run_id
        const canceled = cancels(p.seen)
        expect(canceled[0]).toMatchObject({
          method: 'POST',
          url: `/v1/runs/${runId}/cancel`,
          body: '{}',
        })
        expect(canceled[0]!.idem).toMatch(/\S/)
        expect(run.stdout).toMatch(/conformance: cleanup: \d+ Runs canceled, /)
      },
    )
  },
)
