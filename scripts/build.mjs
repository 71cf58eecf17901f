#!/usr/bin/env node
/* global process, URL */
// `npm run build`: compiles mock/, spec/, conformance/ (and client/) to plain JavaScript with type declarations
// in dist/ (tsconfig.build.json). Assets (spec/*.yaml, fixtures/, the SQL migrations) are not copied: the
// code finds them from the package root (spec/root.ts). `--if-stale` (npm's prestart) builds only when dist/
// is missing or older than a source file, so `npm start` runs the built server on a fresh clone too.
// Plain JavaScript on purpose: it runs before anything is built, and without tsx.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const stamp = join(dist, '.build-stamp')
const SOURCES = ['mock', 'spec', 'conformance', 'client']
const FILES = ['vitest.config.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json']
const BINS = ['dist/mock/main.js', 'dist/conformance/cli/main.js']

/** The newest modification time (ms) of the build's inputs. */
function newestSource() {
  let newest = 0
  const visit = (path) => {
    const s = statSync(path)
    if (s.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
    else if (/\.(ts|json)$/.test(path)) newest = Math.max(newest, s.mtimeMs)
  }
  for (const dir of SOURCES) if (existsSync(join(root, dir))) visit(join(root, dir))
  for (const file of FILES) visit(join(root, file))
  return newest
}

const ifStale = process.argv.includes('--if-stale')
if (ifStale && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource()) process.exit(0)

let tsc
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
} catch {
  // An install without devDependencies: a dist/ that came with it is used as it is.
  if (ifStale && existsSync(join(dist, 'mock', 'main.js'))) process.exit(0)
  process.stderr.write('build: typescript is not installed (npm ci installs it)\n')
  process.exit(1)
}
if (ifStale) process.stdout.write('building dist/ (the sources changed or were never built)...\n')
rmSync(dist, { recursive: true, force: true })
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
})
if (result.status !== 0) process.exit(result.status ?? 1)
for (const bin of BINS) chmodSync(join(root, bin), 0o755)
// A JSON copy of spec/openapi.yaml beside the built loader (dist/spec/openapi.json), keyed by the YAML's
// SHA-256: the built mock parses JSON at start instead of YAML (spec/openapi.ts; a changed YAML is never
// served from a stale copy). The copy must read back as exactly what the YAML parser gives.
{
  const { parse } = await import('yaml')
  const text = readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8')
  const document = parse(text)
  const json = JSON.stringify({ sha256: createHash('sha256').update(text).digest('hex'), document })
  if (!isDeepStrictEqual(JSON.parse(json).document, document)) {
    process.stderr.write('build: spec/openapi.yaml does not survive a JSON round trip\n')
    process.exit(1)
  }
  writeFileSync(join(dist, 'spec', 'openapi.json'), json)
}
// The fixture world's validator as ajv standalone code (mock/fixtures/world-validator.ts), keyed by the
// schema's SHA-256: compiled once here instead of at every start of the built mock.
{
  const built = join(dist, 'mock', 'fixtures', 'world-validator.js')
  const { precompiledSource, PRECOMPILED_FILE } = await import(pathToFileURL(built).href)
  writeFileSync(PRECOMPILED_FILE, precompiledSource())
}
writeFileSync(stamp, `${new Date().toISOString()}\n`)
