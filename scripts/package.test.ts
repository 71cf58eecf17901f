/**
 * Issue #14, the package as an SDK author gets it: `npm pack`, then what publint checks (every `exports`,
 * `types`, `main` and `bin` target is in the tarball, the bins start with a shebang, no unit tests or sources
 * of the mock's own tests are shipped: publint itself is not installable here without the network), then the
 * tarball installed into an empty project and used from plain Node (no tsx): each entry point imported, the bin
 * started and stopped by its pid, a vitest file of that project run against createMock, a receiver that has
 * only `./receiver` (no Hono, SQLite or YAML parser installed) verifying a delivery signed on wall time, and
 * the Python example (when python3 is present).
 *
 * The install works offline: the project gets a lockfile made from this repository's (the same versions,
 * whose tarballs `npm ci` left in the npm cache) and runs `npm ci --offline --ignore-scripts`. The one install
 * script, better-sqlite3's native build (minutes on this machine), is not run: its compiled addon is copied
 * from this repository's node_modules (same version, same Node).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLES = join(ROOT, 'scripts', 'examples')
const NAME = 'ai-employee-mock'
/** Packing builds dist/ first when it is stale (a minute or more on a loaded 2-core machine). */
const SETUP_MS = 10 * 60_000
const STEP_MS = 3 * 60_000

type PackageJson = {
  name: string
  version: string
  main?: string
  types?: string
  exports: Record<string, string | Record<string, string>>
  bin: Record<string, string>
  files: string[]
  dependencies: Record<string, string>
  engines?: Record<string, string>
}
type LockEntry = { dev?: boolean; [k: string]: unknown }

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson
/** The environment of a plain Node child: no loader or test-runner options inherited from vitest. */
const plainEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  for (const name of Object.keys(env))
    if (name.startsWith('VITEST') || name.startsWith('npm_')) delete env[name]
  return env
}

function run(command: string, args: string[], cwd: string, env = plainEnv()) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: STEP_MS })
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) exited ${result.status}\n${result.stdout}\n${result.stderr}`,
    )
  return result.stdout
}

/** Resolves with the first stdout line matching re (rejects if the process exits first). */
function lineMatching(child: ChildProcess, re: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buffer = ''
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8')
      for (const line of buffer.split('\n')) {
        const m = line.match(re)
        if (m) {
          child.stdout!.off('data', onData)
          child.off('exit', onExit)
          return resolve(m)
        }
      }
    }
    const onExit = (code: number | null) =>
      reject(new Error(`exited (${code}) before printing ${re}: ${buffer}`))
    child.stdout!.on('data', onData)
    child.once('exit', onExit)
  })
}

const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', (code) => resolve(code)))

/** Whether something accepts TCP connections on 127.0.0.1:port. */
const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

let tmp: string
let project: string
let packedFiles: string[]
const children: ChildProcess[] = []

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'aem-package-'))
  run(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], ROOT)
  const [packed] = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], ROOT),
  ) as { filename: string; files: { path: string }[] }[]
  packedFiles = packed!.files.map((f) => f.path)

  // The SDK author's empty project, with the tarball as its one dependency.
  project = join(tmp, 'project')
  mkdirSync(project)
  const spec = `file:../${packed!.filename}`
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'sdk-project',
      private: true,
      type: 'module',
      dependencies: { [NAME]: spec },
    }),
  )
  const ours = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>
  }
  const packages: Record<string, unknown> = {
    '': { name: 'sdk-project', dependencies: { [NAME]: spec } },
    [`node_modules/${NAME}`]: {
      version: pkg.version,
      resolved: spec,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  }
  for (const [path, entry] of Object.entries(ours.packages))
    if (path.startsWith('node_modules/') && !entry.dev) packages[path] = entry
  writeFileSync(
    join(project, 'package-lock.json'),
    JSON.stringify({ name: 'sdk-project', lockfileVersion: 3, requires: true, packages }),
  )
  run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project)
  const sqlite = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'))
  cpSync(
    join(sqlite, 'build', 'Release', 'better_sqlite3.node'),
    join(project, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
  )
}, SETUP_MS)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  await Promise.all(children.map(exited))
  if (tmp) rmSync(tmp, { recursive: true, force: true })
}, STEP_MS)

describe('the packed package', () => {
  it('holds every exports, main, types and bin target; bins start with a shebang', () => {
    const shipped = new Set(packedFiles)
    const targets = [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.exports).flatMap((t) =>
        typeof t === 'string' ? [t] : Object.values(t),
      ),
      ...Object.values(pkg.bin),
    ].filter((t): t is string => t !== undefined)
    expect(targets.length).toBeGreaterThan(10)
    for (const target of targets) expect(shipped, target).toContain(target.replace(/^\.\//, ''))
    for (const bin of Object.values(pkg.bin))
      expect(readFileSync(join(ROOT, bin), 'utf8').startsWith('#!/usr/bin/env node\n'), bin).toBe(
        true,
      )
    // Each export condition object names its types first (TypeScript reads conditions in order).
    for (const t of Object.values(pkg.exports))
      if (typeof t !== 'string') expect(Object.keys(t)[0]).toBe('types')
  })

  it('the mock bin is one bundled module: it imports only Node built-ins and better-sqlite3 (start-up)', () => {
    // Guards issue #13 point 5 (start-up within 2x bare Hono): loading the compiled modules one by one was
    // most of it. Other imports would be loaded at start, a relative one would not be found once installed.
    const bin = readFileSync(join(ROOT, pkg.bin[NAME]!), 'utf8')
    const imported = [
      ...bin.matchAll(/^import\s[^;'"]*?(?:from\s)?\s*["']([^"']+)["']/gm),
      ...bin.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
    ].map((m) => m[1]!)
    expect(imported).toContain('better-sqlite3')
    expect(imported.filter((s) => !s.startsWith('node:') && s !== 'better-sqlite3')).toEqual([])
    // The YAML parser is not bundled: the built mock reads the document's JSON copy (spec/openapi.ts).
    expect(bin).not.toMatch(/node_modules\/yaml\//)
  })

  it('ships no TypeScript sources, no unit tests of the mock or the CLI, no scripts', () => {
    const stray = packedFiles.filter(
      (f) =>
        (f.endsWith('.ts') && !f.endsWith('.d.ts')) ||
        f.startsWith('scripts/') ||
        /^dist\/(mock|spec|conformance\/(cli|checks))\/.*\.test\.js$/.test(f),
    )
    expect(stray).toEqual([])
    // The suite's own test files are what ./conformance runs: they are shipped, compiled.
    expect(packedFiles.some((f) => /^dist\/conformance\/tests\/.*\.test\.js$/.test(f))).toBe(true)
    for (const asset of ['spec/openapi.yaml', 'spec/errors.yaml', 'fixtures/default-world.json'])
      expect(packedFiles).toContain(asset)
    expect(packedFiles.some((f) => /^mock\/store\/schema\/.*\.sql$/.test(f))).toBe(true)
    // The inspector's page is shipped as plain files (no build step for the user).
    for (const asset of ['index.html', 'inspector.js', 'inspector.css', 'inspector.svg'])
      expect(packedFiles).toContain(`mock/inspector/page/${asset}`)
  })
})

describe('installed into an empty project', () => {
  it(
    'imports each entry point from plain Node ESM',
    () => {
      writeFileSync(
        join(project, 'entries.mjs'),
        `
import { createMock } from '${NAME}'
import { verifySignature, Deduplicator } from '${NAME}/receiver'
import { OPENAPI_FILE, ERROR_CATALOG, loadOpenApi } from '${NAME}/spec'
import { run } from '${NAME}/conformance'
import { ReferenceClient, nextStep } from '${NAME}/client'
import { existsSync } from 'node:fs'
const mock = await createMock()
const clock = await (await mock.fetch(new Request('http://mock/_mock/clock'))).json()
const deployments = await mock.fetch(new Request('http://mock/v1/deployments', { headers: { Authorization: 'Bearer sk_test_a_full' } }))
mock.close()
console.log(JSON.stringify({
  clock, deployments: deployments.status, mockKeys: Object.keys(mock).sort(),
  receiver: [typeof verifySignature, typeof Deduplicator],
  client: [typeof ReferenceClient, typeof nextStep],
  spec: [existsSync(OPENAPI_FILE), loadOpenApi().info.version, 'NOT_FOUND' in ERROR_CATALOG],
  // run() resolves with the CLI's exit status (2: bad options) instead of exiting the process.
  conformance: await run({ baseUrl: 'ftp://not-a-service' }),
}))
`,
      )
      const out = JSON.parse(run(process.execPath, ['entries.mjs'], project)) as Record<
        string,
        unknown
      >
      expect(out.clock).toEqual({ now: '2026-11-02T09:00:00.000Z', mode: 'manual' })
      expect(out.deployments).toBe(200)
      // The narrow surface: no app, no deps.
      expect(out.mockKeys).toEqual([
        'clearRequests',
        'clock',
        'close',
        'faults',
        'fetch',
        'fixtures',
        'listen',
        'requests',
        'reset',
        'scenarios',
        'webhooks',
      ])
      expect(out.receiver).toEqual(['function', 'function'])
      expect(out.client).toEqual(['function', 'function'])
      expect(out.spec).toEqual([true, '1.3.0', true])
      expect(out.conformance).toBe(2)
    },
    STEP_MS,
  )

  it(
    'gives TypeScript users typed entry points (exports types conditions, strict, no internals)',
    () => {
      writeFileSync(
        join(project, 'typed.ts'),
        `
import { createMock, MockControlError, type MockServer } from '${NAME}'
import { verifySignature, type VerifyResult } from '${NAME}/receiver'
import { run, type RunOptions } from '${NAME}/conformance'
import { ERROR_CATALOG, OPENAPI_FILE, type components } from '${NAME}/spec'

export async function sdkTest(): Promise<void> {
  const mock: MockServer = await createMock({ clock: 'manual', seed: 's', clockStart: 'now' })
  const now: Date = await mock.clock.advance(5)
  // @ts-expect-error the internal dependency set is not part of the package's surface
  void mock.deps
  const queued: { scenario: string } = await mock.scenarios.queue('d', { steps: [{ at: 1, step: 'succeed' }] })
  const verdict: VerifyResult = verifySignature({ header: undefined, rawBody: '', secrets: [], nowS: 0 })
  const options: RunOptions = { baseUrl: 'http://127.0.0.1:4010', only: ['SES'] }
  const status: number = await run(options)
  const turn: components['schemas']['Turn'] | undefined = undefined
  void [now, queued, verdict, status, turn, ERROR_CATALOG, OPENAPI_FILE, MockControlError]
}
`,
      )
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
          },
          files: ['typed.ts'],
        }),
      )
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], project)
    },
    STEP_MS,
  )

  it(
    'the bin prints its version, serves the mock, and stopping it by its pid frees the port',
    async () => {
      const bin = join(project, 'node_modules', '.bin', NAME)
      expect(run(bin, ['--version'], project)).toBe(
        `${NAME} ${pkg.version} (interface version 1.3.0)\n`,
      )
      const child = spawn(bin, ['--port', '0', '--quiet'], { cwd: project, env: plainEnv() })
      children.push(child)
      const [, url] = await lineMatching(child, /listening on (http:\/\/\S+)/)
      const health = await fetch(`${url}/_mock/health`)
      expect(await health.json()).toEqual({ status: 'ok' })
      expect(health.headers.get('x-mock-version')).toBe(pkg.version)
      // The inspector's page and its script, found from the installed package's root.
      const page = await fetch(`${url}/_mock/ui`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('/_mock/ui/inspector.js')
      const script = await fetch(`${url}/_mock/ui/inspector.js`)
      expect(script.status).toBe(200)
      expect(await script.text()).toContain('/_mock/stream')
      child.kill('SIGTERM')
      expect(await exited(child)).toBe(0)
      expect(await accepts(Number(new URL(url!).port))).toBe(false)
    },
    STEP_MS,
  )

  it(
    'the second bin runs the conformance suite from the package against a mock over HTTP',
    async () => {
      const mock = spawn(join(project, 'node_modules', '.bin', NAME), ['--port', '0', '--quiet'], {
        cwd: project,
        env: plainEnv(),
      })
      children.push(mock)
      const [, url] = await lineMatching(mock, /listening on (http:\/\/\S+)/)
      const report = join(tmp, 'report')
      const out = run(
        join(project, 'node_modules', '.bin', 'ai-employee-conformance'),
        [
          '--base-url',
          url!,
          '--api-key',
          'sk_test_a_full',
          '--only',
          'SVC-002',
          '--report-dir',
          report,
        ],
        project,
        { ...plainEnv(), FORCE_COLOR: '0' },
      )
      expect(out).toContain('target mock-http')
      expect(out).toMatch(/auth\/access\.test\.js: [1-9]\d* passed/)
      expect(existsSync(join(report, 'requirements.json'))).toBe(true)
      mock.kill('SIGTERM')
      expect(await exited(mock)).toBe(0)
    },
    STEP_MS,
  )

  it(
    'npx <package>: stopping npx by its pid stops the server it started too',
    async () => {
      const child = spawn('npx', ['--offline', NAME, '--port', '0', '--quiet'], {
        cwd: project,
        env: plainEnv(),
      })
      children.push(child)
      const [, url] = await lineMatching(child, /listening on (http:\/\/\S+)/)
      const port = Number(new URL(url!).port)
      expect(await accepts(port)).toBe(true)
      child.kill('SIGTERM')
      await exited(child)
      // The server, npm's grandchild, notices its parent is gone and closes (a bounded wait, not a timing).
      await expect.poll(() => accepts(port), { timeout: 60_000, interval: 250 }).toBe(false)
    },
    STEP_MS,
  )

  it(
    'a vitest file of the project imports createMock, moves the clock and asserts on a Turn',
    () => {
      cpSync(join(EXAMPLES, 'vitest', 'turn.test.js'), join(project, 'turn.test.js'))
      const out = run(
        process.execPath,
        [join(project, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', project],
        project,
      )
      // eslint-disable-next-line no-control-regex -- vitest's colours
      expect(out.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Tests\s+4 passed \(4\)/)
    },
    STEP_MS,
  )

  it(
    'a receiver with only ./receiver installed verifies a delivery the mock signed on wall time',
    async () => {
      // The receiver's project holds this package alone: no hono, better-sqlite3 or yaml to load.
      const receiverProject = join(tmp, 'receiver-only')
      cpSync(join(project, 'node_modules', NAME), join(receiverProject, 'node_modules', NAME), {
        recursive: true,
        dereference: true,
      })
      cpSync(join(EXAMPLES, 'receiver', 'receiver.mjs'), join(receiverProject, 'receiver.mjs'))
      writeFileSync(join(receiverProject, 'package.json'), '{"type":"module","private":true}')
      for (const dep of ['hono', 'better-sqlite3', 'yaml'])
        expect(existsSync(join(receiverProject, 'node_modules', dep))).toBe(false)
      // The main entry cannot load there (it needs them): the receiver's import is what is tested.
      const main = spawnSync(process.execPath, ['-e', `import('${NAME}')`], {
        cwd: receiverProject,
        env: plainEnv(),
        encoding: 'utf8',
      })
      expect(main.status).not.toBe(0)

      const receiver = spawn(process.execPath, ['receiver.mjs'], {
        cwd: receiverProject,
        env: plainEnv(),
      })
      children.push(receiver)
      const [, receiverPort] = await lineMatching(receiver, /receiver listening on (\d+)/)

      const mock = spawn(
        join(project, 'node_modules', '.bin', NAME),
        [
          '--port',
          '0',
          '--quiet',
          '--clock',
          'manual',
          '--clock-start',
          'now',
          '--allow-insecure-webhooks',
        ],
        { cwd: project, env: plainEnv() },
      )
      children.push(mock)
      const [, url] = await lineMatching(mock, /listening on (http:\/\/\S+)/)
      const json = async (path: string, init: RequestInit = {}) => {
        const res = await fetch(`${url}${path}`, {
          ...init,
          headers: { 'Content-Type': 'application/json', ...init.headers },
        })
        return { status: res.status, body: (await res.json()) as Record<string, unknown> }
      }
      const { body: fixtures } = await json('/_mock/fixtures')
      const a = (fixtures.projects as { id: string; owner_token: string }[])[0]!
      const hook = await json(`/api/runtime/projects/${a.id}/webhooks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${a.owner_token}` },
        body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook` }),
      })
      expect(hook.status).toBe(201)
      receiver.stdin!.write(`${hook.body.secret as string}\n`)
      const created = await json('/v1/deployments/aaaaaaaa-d000-4000-8000-000000000001/sessions', {
        method: 'POST',
        headers: { Authorization: 'Bearer sk_test_a_full', 'Idempotency-Key': 'receiver-1' },
        body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
      })
      expect(created.status).toBe(202)
      const delivered = lineMatching(receiver, /^\{.*"ok".*\}$/)
      await json('/_mock/clock/advance', { method: 'POST', body: JSON.stringify({ seconds: 5 }) })
      const [line] = await delivered
      expect(JSON.parse(line!)).toMatchObject({ ok: true, seen: 'new' })
    },
    STEP_MS,
  )

  const python = spawnSync('python3', ['--version']).status === 0
  it.skipIf(!python)(
    'the Python example (standard library only) passes against `npx ai-employee-mock`',
    () => {
      const out = spawnSync(
        'python3',
        ['-m', 'unittest', 'discover', '-s', join(EXAMPLES, 'python'), '-v'],
        { cwd: project, env: plainEnv(), encoding: 'utf8', timeout: STEP_MS },
      )
      expect(out.status, `${out.stdout}\n${out.stderr}`).toBe(0)
      expect(out.stderr).toMatch(/Ran 3 tests/)
    },
    STEP_MS,
  )
})
