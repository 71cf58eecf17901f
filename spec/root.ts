/**
 * Where the package's own files are (spec/*.yaml, fixtures/, the SQL migrations), wherever it runs from: the
 * nearest folder above this module that holds spec/openapi.yaml. That is the repository when run from source
 * (tsx, vitest) and the installed package's root when run from its build (dist/spec/root.js).
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'spec', 'openapi.yaml'))) return dir
    if (dirname(dir) === dir) throw new Error(`no package root (spec/openapi.yaml) above ${start}`)
  }
}

/** The package root (absolute path). */
export const PACKAGE_ROOT: string = findRoot(dirname(fileURLToPath(import.meta.url)))

/** Absolute path of a file or folder of the package, from path segments relative to its root. */
export const packageFile = (...segments: string[]): string => join(PACKAGE_ROOT, ...segments)

/** The package's own version (package.json): the mock's version, distinct from the interface version. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }
).version
