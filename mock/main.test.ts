/**
 * The CLI's --webhook-ca flag (README Start flags): a file that cannot be read or holds no PEM certificate is a
 * usage error (exit 2, the reason and the usage text on stderr) before anything listens.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs the CLI from source with the given flags; resolves with its exit code and stderr. */
const cli = (...args: string[]) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(root, 'mock', 'main.ts'), '--port', '0', ...args],
      { cwd: root, timeout: 60_000 },
      (error, _stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
    )
  })

describe('--webhook-ca', () => {
  it('refuses a file that cannot be read or holds no certificate, with exit 2', async () => {
    const missing = await cli('--webhook-ca', join(dir, 'absent.pem'))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('cannot read --webhook-ca')
    const notPem = join(dir, 'not.pem')
    writeFileSync(notPem, 'not a certificate\n')
    const refused = await cli('--webhook-ca', notPem)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('holds no PEM certificate')
  }, 120_000)
})
