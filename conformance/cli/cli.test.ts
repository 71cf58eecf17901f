/**
 * The conformance CLI end to end: a mock served over HTTP on 127.0.0.1, the CLI run against it as a child
 * process (which runs the vitest project "conformance" without this directory), its exit status and reports;
 * and the one-line refusals of a target that cannot be used.
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMockServer } from '../support/target.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx')

type Run = { code: number | null; stdout: string; stderr: string }

/** Runs the CLI with a clean environment (none of this vitest run's variables). */
function cli(args: string[]): Promise<Run> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('VITEST') && !k.startsWith('TARGET_') && !k.startsWith('FC_'),
    ),
  )
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, ['conformance/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...env, NODE_ENV: 'production', FORCE_COLOR: '0' },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

// A conformance run excludes this directory; the guard keeps a run that did not from running itself.
describe.skipIf(process.env.CONFORMANCE_CLI === '1')('npm run conformance', () => {
  let mock: Awaited<ReturnType<typeof startMockServer>>
  let dir: string
  beforeAll(async () => {
    mock = await startMockServer({ clock: 'manual' })
    dir = mkdtempSync(join(tmpdir(), 'conformance-report-'))
  })
  afterAll(async () => {
    await mock?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('runs the selected requirement against a mock over HTTP, exits 0 and writes the reports', async () => {
    const seed = 4242
    const run = await cli([
      '--base-url',
      mock.url,
      '--api-key',
      'sk_test_a_full',
      '--only',
      'SVC-002',
      '--seed',
      String(seed),
      '--report-dir',
      dir,
    ])
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toContain('target mock-http')
    expect(run.stdout).toContain(`fast-check seed ${seed}`)
    expect(run.stdout).toMatch(/\[\d+\/\d+\] auth\/access\.test\.ts: \d+ passed/)

    const junit = readFileSync(join(dir, 'junit.xml'), 'utf8')
    expect(junit).toContain('<testsuites')
    expect(junit).toContain('SVC-002')
    const report = JSON.parse(readFileSync(join(dir, 'requirements.json'), 'utf8')) as {
      seed: number
      target: { kind: string }
      requirements: { id: string; state: string }[]
    }
    expect(report.seed).toBe(seed)
    expect(report.target.kind).toBe('mock-http')
    const states = new Map(report.requirements.map((r) => [r.id, r.state]))
    expect(states.get('SVC-002')).toBe('passed')
    expect(states.get('SVC-001')).toBe('not-run')
    expect(readFileSync(join(dir, 'requirements.md'), 'utf8')).toMatch(
      /\| SVC-002 \| real \| passed \|/,
    )
  }, 240_000)

  it('stops with one line and status 2 when the API key is refused', async () => {
    const run = await cli(['--base-url', mock.url, '--api-key', 'sk_wrong', '--report-dir', dir])
    expect(run.code).toBe(2)
    expect(run.stderr.trim()).toMatch(/^conformance: the API key was refused: .*401/)
    expect(run.stdout).not.toContain('running')
  }, 60_000)

  it('stops with one line and status 2 when the target is unreachable', async () => {
    const run = await cli(['--base-url', 'http://127.0.0.1:9', '--api-key', 'k'])
    expect(run.code).toBe(2)
    expect(run.stderr.trim()).toMatch(/^conformance: cannot reach http:\/\/127\.0\.0\.1:9: /)
    expect(existsSync(join(ROOT, 'conformance-report', 'junit.xml'))).toBe(false)
  }, 60_000)

  it('stops the run with one root-cause line and status 2 when the target stops answering mid-run', async () => {
    // Answers the CLI's own checks (fetch, user-agent "node"), then drops every connection of the tests.
    const gone = createServer((req, res) => {
      if (req.headers['user-agent'] !== 'node') return req.socket.destroy()
      res.setHeader('Content-Type', 'application/json')
      if (req.url?.startsWith('/_mock/')) {
        res.statusCode = 404
        return res.end(JSON.stringify({ error: { code: 'NOT_FOUND' } }))
      }
      res.end(
        JSON.stringify({
          items: [
            { id: '7d1c2f3a-0b4e-4c6a-9f1e-2a3b4c5d6e01', project_id: 'p', status: 'ACTIVE' },
          ],
        }),
      )
    })
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`
      const run = await cli([
        '--base-url',
        url,
        '--api-key',
        'k',
        '--only',
        'AUTH,SVC',
        '--report-dir',
        dir,
      ])
      expect(run.code).toBe(2)
      expect(run.stderr.trim()).toMatch(
        /^conformance: http:\/\/127\.0\.0\.1:\d+: the target stopped answering \((ECONNRESET|socket hang up) in 5 tests in a row\): the run was stopped$/,
      )
      // Stopped early: the files after the one running then never ran.
      const files = /running (\d+) test files/.exec(run.stdout)
      const done = [...run.stdout.matchAll(/^\[(\d+)\/\d+\] \S+: /gm)].map((m) => Number(m[1]))
      expect(Number(files?.[1])).toBeGreaterThan(2)
      expect(Math.max(0, ...done)).toBeLessThan(Number(files?.[1]))
    } finally {
      gone.closeAllConnections()
      await new Promise((resolve) => gone.close(resolve))
    }
  }, 240_000)

  it('fails a stateless `prism mock` of the document with a readable report (the request as curl, the answer)', async () => {
    const prism = spawn(
      join(ROOT, 'node_modules', '.bin', 'prism'),
      ['mock', 'spec/openapi.yaml', '-h', '127.0.0.1', '-p', '0'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ''
        const onData = (chunk: Buffer) => {
          out += chunk.toString()
          const m = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
          if (m) resolve(m[1]!)
        }
        prism.stdout.on('data', onData)
        prism.stderr.on('data', onData)
        prism.on('exit', (code) => reject(new Error(`prism exited with ${code}: ${out}`)))
      })
      const run = await cli([
        '--base-url',
        url,
        '--api-key',
        'sk_test_a_full',
        '--only',
        'AUTH-006',
        '--report-dir',
        dir,
      ])
      expect(run.code, run.stderr).toBe(1)
      expect(run.stdout).toMatch(/failed: AUTH-006/)
      const md = readFileSync(join(dir, 'requirements.md'), 'utf8')
      expect(md).toMatch(/### AUTH-006/)
      expect(md).toMatch(/expected INVALID_API_KEY, got 200/)
      expect(md).toMatch(
        /curl -i -X GET '.*\/v1\/deployments' -H 'Authorization: Bearer [^']*\*\*\*\*'/,
      )
      const har = JSON.parse(readFileSync(join(dir, 'failures.har'), 'utf8')) as {
        log: { entries: { response: { status: number } }[] }
      }
      expect(har.log.entries.some((e) => e.response.status === 200)).toBe(true)
    } finally {
      prism.kill()
    }
  }, 240_000)

  it('explains its flags, and refuses bad ones with status 2', async () => {
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--allow-spend')
    const bad = await cli(['--only', 'NOPE-001'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('neither a requirement id nor an area')
  }, 60_000)
})
