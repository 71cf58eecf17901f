/**
 * With --only, the test files that can hold a selected test: those naming a selected id (or an id of a
 * selected area) as a string literal, and those building titles from ids computed at run time (`req(...ids)`).
 * Loading only these keeps `--only` fast; vitest's testNamePattern then picks the tests themselves.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The suite's test files (relative to root: the repository, or the package's dist/), without the CLI's and the mutation test's own tests. */
export function suiteFiles(root: string): string[] {
  return readdirSync(join(root, 'conformance'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.test\.(ts|js)$/.test(f)) // .js: the package's compiled suite (dist/)
    .map((f) => `conformance/${f.split('\\').join('/')}`)
    .filter((f) => !f.startsWith('conformance/cli/') && !f.startsWith('conformance/mutants/'))
    .sort()
}

/** Whether a test file's source may hold a test of the selection (ids and areas, upper-case). */
export function mayHold(source: string, only: readonly string[]): boolean {
  if (/\breq\((?!\s*['"])/.test(source)) return true
  return only.some((id) => {
    const literal = /-\d{3}$/.test(id) ? `${id}['"]` : `${id}-\\d{3}['"]`
    return new RegExp(`['"]${literal}`).test(source)
  })
}

/** The files to load for a selection (every suite file when nothing is selected). */
export function filesFor(root: string, only: readonly string[]): string[] {
  const files = suiteFiles(root)
  if (only.length === 0) return files
  return files.filter((f) => mayHold(readFileSync(join(root, f), 'utf8'), only))
}
