/**
 * Making a variant: a copy of the mock (mock/, spec/, fixtures/, package.json; node_modules linked) with the
 * variant's patches applied. Pure text work, so variants.test.ts can check every patch against the current
 * sources without running anything.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Patch, Variant } from './variants.js'

/** What a copy of the mock holds (tests left out: the copy is only served). */
export const COPIED = ['mock', 'spec', 'fixtures', 'package.json'] as const

/** How often `find` occurs in `text`. */
export const occurrences = (text: string, find: string): number =>
  find.length === 0 ? 0 : text.split(find).length - 1

/** Why a patch cannot apply to a source text (undefined: it applies, exactly once). */
export function patchProblem(text: string | undefined, patch: Patch): string | undefined {
  if (text === undefined) return `${patch.file}: no such file`
  const n = occurrences(text, patch.find)
  if (n === 1) return undefined
  return `${patch.file}: the text to replace occurs ${n} times (exactly once expected): ${JSON.stringify(patch.find.slice(0, 80))}`
}

/** The problems of a variant's patches against the sources under `root` (empty: it applies). */
export function variantProblems(root: string, variant: Pick<Variant, 'patches'>): string[] {
  const texts = new Map<string, string>()
  const problems: string[] = []
  for (const patch of variant.patches) {
    const path = join(root, patch.file)
    const text =
      texts.get(patch.file) ?? (existsSync(path) ? readFileSync(path, 'utf8') : undefined)
    const problem = patchProblem(text, patch)
    if (problem) problems.push(problem)
    else
      texts.set(
        patch.file,
        text!.replace(patch.find, () => patch.replace),
      )
  }
  return problems
}

/**
 * Copies the mock from `root` to `dir` and applies the variant (a mutant, or a benign variant of
 * ../benign/); throws when a patch does not apply.
 */
export function makeVariant(
  root: string,
  dir: string,
  variant: Pick<Variant, 'name' | 'patches'>,
): void {
  const problems = variantProblems(root, variant)
  if (problems.length > 0)
    throw new Error(`variant ${variant.name} is stale: ${problems.join('; ')}`)
  mkdirSync(dir, { recursive: true })
  for (const entry of COPIED)
    cpSync(join(root, entry), join(dir, entry), {
      recursive: true,
      filter: (src) => !src.endsWith('.test.ts'),
    })
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  for (const patch of variant.patches) {
    const path = join(dir, patch.file)
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(patch.find, () => patch.replace),
    )
  }
}
