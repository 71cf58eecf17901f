#!/usr/bin/env node
/* global process, URL */
// `npm run build`: compiles mock/, spec/, conformance/ (and client/) to plain JavaScript with type declarations
// in dist/ (tsconfig.build.json), then bundles the mock's bin (dist/mock/main.js) into one file. Assets
// (spec/*.yaml, fixtures/, the SQL migrations) are not copied: the code finds them from the package root
// (spec/root.ts). `--if-stale` (npm's prestart) builds only when dist/
// is missing or older than a source file, so `npm start` runs the built server on a fresh clone too.
// Plain JavaScript on purpose: it runs before anything is built, and without tsx.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
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
// schema's SHA-256: compiled once here instead of at every start of the built mock. And the SHA-256 of the
// default world when the schema accepts it: the built mock does not check that text again at start.
{
  const built = join(dist, 'mock', 'fixtures', 'world-validator.js')
  const { precompiledSource, PRECOMPILED_FILE, validWorldsSource, VALID_WORLDS_FILE } =
    await import(pathToFileURL(built).href)
  writeFileSync(PRECOMPILED_FILE, precompiledSource())
  writeFileSync(
    VALID_WORLDS_FILE,
    validWorldsSource([join(root, 'fixtures', 'default-world.json')]),
  )
}
// The mock's bin (`npm start`, npx) as one ES module: loading the ~200 compiled modules and ~180 CommonJS files
// of its dependencies one by one was most of its start-up. Only the entry is bundled (the package's other
// entry points stay as compiled); better-sqlite3 (a native addon) stays a plain import. The build's own
// modules find files beside themselves (import.meta.url: the JSON copy of the document, the precompiled
// validator, the package root): in the bundle each import.meta.url becomes its original module's URL.
{
  const { build } = await import('esbuild')
  // esbuild hands over real paths (symbolic links resolved).
  const ownDist = realpathSync(dist)
  const entry = join(ownDist, 'mock', 'main.js')
  const ownUrl = {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(ownDist + sep)) return undefined
        const source = readFileSync(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return undefined
        const path = relative(dirname(entry), args.path)
          .split(sep)
          .join('/')
          .replace(/^(?!\.)/, './')
        const url = `new URL(${JSON.stringify(path)}, import.meta.url).href`
        return { contents: source.replaceAll('import.meta.url', url), loader: 'js' }
      })
    },
  }
  const bundled = await build({
    entryPoints: [entry],
    outfile: entry,
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3'],
    // The bundled CommonJS dependencies require Node's built-in modules.
    banner: {
      js: [
        "import { createRequire as __bundleRequire } from 'node:module'",
        'const require = __bundleRequire(import.meta.url)',
      ].join('\n'),
    },
    plugins: [ownUrl],
    logLevel: 'warning',
  })
  writeFileSync(entry, bundled.outputFiles[0].contents)
}
for (const bin of BINS) chmodSync(join(root, bin), 0o755)
writeFileSync(stamp, `${new Date().toISOString()}\n`)
