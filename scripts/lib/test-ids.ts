/** Finds the requirement ids that test titles name (`[AREA-NNN]`) in the project's test files. */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { ROOT } from './generated.js'

export const ID_PATTERN = /^[A-Z]{2,6}-\d{3}$/
const TITLE_ID = /\[([A-Z]{2,6}-\d{3})\]/g
/** req('AUTH-001', 'AUTH-006') calls (conformance/support/req.ts) build title prefixes too. */
const REQ_CALL = /\breq\(([^)]*)\)/g
const QUOTED_ID = /['"`]([A-Z]{2,6}-\d{3})['"`]/g

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* testFiles(path)
    else if (entry.name.endsWith('.test.ts')) yield path
  }
}

/** requirement id -> test files (relative paths) whose titles name it. */
export function idsNamedByTests(
  folders = ['conformance', 'mock', 'scripts', 'client'],
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>()
  for (const folder of folders) {
    if (!existsSync(join(ROOT, folder))) continue
    const files = [...testFiles(join(ROOT, folder))]
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      const ids = [...text.matchAll(TITLE_ID)].map((m) => m[1]!)
      for (const call of text.matchAll(REQ_CALL))
        ids.push(...[...call[1]!.matchAll(QUOTED_ID)].map((m) => m[1]!))
      for (const id of ids) {
        if (!found.has(id)) found.set(id, new Set())
        found.get(id)!.add(relative(ROOT, file))
      }
    }
  }
  return found
}
