/**
 * `npm run docs:real-target`: what the conformance suite holds a real deployment to, generated from the tests.
 * Runs the suite in real-deployment mode against the mock in this process dressed as a real target
 * (CONFORMANCE_REHEARSAL=real: no control API, no reset, every world role present, spending allowed), so every
 * skip it shows is a skip of the suite's own logic on a real target (mock only, an x-assumed choice), not of a
 * missing role or budget, and writes docs/real-target.md from the run's requirements.json: per requirement,
 * whether a real target is held to it, partly, or not, with the tests' own skip reasons.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { renderRealTargetPage, type RunReport } from './lib/real-target-page.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const PAGE = join(ROOT, 'docs/real-target.md')

const dir = mkdtempSync(join(tmpdir(), 'real-target-'))
try {
  const run = spawnSync(
    join(ROOT, 'node_modules/.bin/tsx'),
    ['conformance/cli/main.ts', '--seed', '1', '--num-runs', '5', '--report-dir', dir],
    {
      cwd: ROOT,
      env: { ...process.env, CONFORMANCE_REHEARSAL: 'real', FORCE_COLOR: '0' },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  )
  if (run.status === 2 || run.error)
    throw run.error ?? new Error('the conformance run did not start')
  const report = JSON.parse(readFileSync(join(dir, 'requirements.json'), 'utf8')) as RunReport
  writeFileSync(PAGE, renderRealTargetPage(report))
  console.log(`wrote ${PAGE}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
