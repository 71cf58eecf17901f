/**
 * The README's CI example (scripts/examples/ci/conformance-nightly.yml) stays runnable: its command line parses
 * with the CLI's own parser, reads the secrets from the variables the CLI reads, and keeps the report directory
 * it uploads.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { loadRequirements } from '../../spec/index.js'
import { parseCliArgs } from './args.js'

const FILE = fileURLToPath(
  new URL('../../scripts/examples/ci/conformance-nightly.yml', import.meta.url),
)

type Step = {
  name?: string
  run?: string
  env?: Record<string, string>
  with?: Record<string, string>
}

describe('the nightly CI example', () => {
  const workflow = parse(readFileSync(FILE, 'utf8')) as {
    jobs: Record<string, { steps: Step[] }>
  }
  const steps = Object.values(workflow.jobs).flatMap((j) => j.steps)
  const run = steps.find((s) => s.run?.includes('npm run conformance --'))!

  it('runs the conformance command with flags the CLI accepts', () => {
    expect(run).toBeDefined()
    // GitHub expressions and shell variables, with what they would hold.
    const line = run
      .run!.replace(/\$\{\{\s*vars\.AIE_BASE_URL\s*\}\}/g, 'https://api.example.com')
      .replace(/\$\{\{[^\n]*?AIE_DEPLOYMENT[^\n]*?\}\}/g, '--deployment dep-1')
      .replace(/\$\{\{[^\n]*?AIE_WORKFLOW[^\n]*?\}\}/g, '--workflow wf-1')
      .replace(/\$GITHUB_WORKSPACE/g, '/ws')
    expect(line).not.toMatch(/\$\{\{/)
    const args = line
      .split('npm run conformance --')[1]!
      .trim()
      .split(/\s+/)
      .map((a) => a.replace(/^"|"$/g, ''))
    const catalog = loadRequirements()
    const options = parseCliArgs(
      args,
      {
        ids: new Set(catalog.requirements.map((r) => r.id)),
        areas: new Set(Object.keys(catalog.areas)),
      },
      run.env,
    )
    expect(options).toMatchObject({
      baseUrl: 'https://api.example.com',
      deployment: 'dep-1',
      workflow: 'wf-1',
      allowSpend: true,
      maxExecutions: 10,
      maxSu: 20,
      baseline: '/ws/conformance-baseline.txt',
      reportDir: '/ws/conformance-report',
    })
    // Secrets come from the environment variables the CLI reads, never from the command line.
    expect(options.apiKey).toBe('${{ secrets.AIE_API_KEY }}')
    expect(options.ownerToken).toBe('${{ secrets.AIE_OWNER_TOKEN }}')
    expect(line).not.toMatch(/secrets\./)
  })

  it('keeps the report directory it wrote, also when the run fails', () => {
    const upload = steps.find((s) => s.with?.path?.startsWith('conformance-report'))
    expect(upload).toMatchObject({ if: 'always()' })
  })
})
