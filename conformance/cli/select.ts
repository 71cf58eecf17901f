/**
 * What `--only` selects, and the test files to load for it.
 *
 * An id selects itself. An area selects its own requirements (AREA-NNN) and every requirement of an area without
 * a resource of its own whose rule or codes name the area's resource in the document's words (AREA_TERMS): the rules of the
 * cross-cutting sections (States and transitions, Codes, Sizes and counts, Retention, ...) are about the
 * resources of the endpoint areas, and a test verifying one of them is a test of that area too. So `--only RUN`
 * runs the test of STATE-011 (a cancel request on a Run that is already terminal is answered 200), `--only FILE`
 * the one of ERR-043 (FILE_TOO_LARGE: 413) and SIZE-007 (an input file over 20 MiB), `--only SES` the one of
 * RET-001 (a receipt's idempotency_expires_at). A test runs when its title names a selected id, whatever else
 * it names.
 *
 * With --only, the files loaded are those that can hold a selected test: those naming a selected id as a string
 * literal, and those building titles from ids computed at run time (`req(...ids)`). Loading only these keeps
 * `--only` fast; vitest's testNamePattern (onlyPattern) then picks the tests themselves.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadRequirements, type Requirement } from '../../spec/index.js'

/**
 * The words by which the document names each endpoint area's resource: its name, its error codes' prefix, its
 * paths, the receipt field it shares. Areas not listed here (STATE, ERR, SIZE, RET, ...) select their own ids.
 */
export const AREA_TERMS: Readonly<Record<string, RegExp>> = {
  DEP: /\bDeployments?\b|\bDEPLOYMENT_[A-Z_]+\b|\/v1\/deployments\b/,
  SES: /\b(?:Sessions?|Turns?)\b|\b(?:SESSION|TURN)_[A-Z_]+\b|\/v1\/sessions\b|\bidempotency_expires_at\b/,
  RUN: /\bRuns?\b|\bRUN_[A-Z_]+\b|\/v1\/runs\b|\/runs\b|\bidempotency_expires_at\b/,
  WF: /\b[Ww]orkflows?\b|\bWORKFLOW_[A-Z_]+\b/,
  FILE: /\b(?:[Uu]ploads?|[Uu]ploaded|input files?)\b|\bFILE_[A-Z_]+\b|\/v1\/files\b/,
  ART: /\b[Aa]rtifacts?\b|\bARTIFACT_[A-Z_]+\b/,
  ACT: /\b(?:[Aa]pprovals?|[Qq]uestions?)\b|\bACTION_[A-Z_]+\b|\bidempotency_expires_at\b/,
  WORK: /\/v1\/works\b|\b[Pp]reparations?\b|\b(?:WORK|PREPARATION)_[A-Z_]+\b/,
  USAGE: /\/v1\/usage\b/,
}

const areaOf = (id: string) => id.replace(/-\d{3}$/, '')
const isId = (item: string) => /-\d{3}$/.test(item)

type Catalog = readonly Pick<Requirement, 'id' | 'rule' | 'codes'>[]

/**
 * Whether a requirement belongs to an area: its own id's, or, for a requirement of an area without a resource
 * of its own (not in AREA_TERMS), one whose resource its rule or codes name. Endpoint areas do not take each
 * other's requirements (SES-001, the Session receipt's idempotency_expires_at, stays out of RUN).
 */
export function inArea(area: string, r: Pick<Requirement, 'id' | 'rule' | 'codes'>): boolean {
  const own = areaOf(r.id)
  if (own === area) return true
  const terms = AREA_TERMS[area]
  if (terms === undefined || own in AREA_TERMS) return false
  return [r.rule, ...r.codes].some((text) => terms.test(text))
}

/** The requirement ids a selection covers (empty: the selection is empty, everything runs). */
export function selectedIds(
  only: readonly string[],
  catalog: Catalog = loadRequirements().requirements,
): Set<string> {
  const ids = new Set<string>()
  for (const item of only) {
    if (isId(item)) ids.add(item)
    else for (const r of catalog) if (inArea(item, r)) ids.add(r.id)
  }
  return ids
}

/** Whether a requirement id is selected by --only (every id when it is empty). */
export function isSelected(
  only: readonly string[],
  id: string,
  catalog: Catalog = loadRequirements().requirements,
): boolean {
  if (only.length === 0 || only.includes(id) || only.includes(areaOf(id))) return true
  const r = catalog.find((x) => x.id === id)
  return r !== undefined && only.some((area) => !isId(area) && inArea(area, r))
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * vitest's testNamePattern for --only: a test runs when its title names one of the selected ids (`[SVC-002]`),
 * an id of a selected area (`[AUTH-` + digits) or a requirement of the area by its resource (inArea).
 * undefined: everything runs.
 */
export function onlyPattern(
  only: readonly string[],
  catalog: Catalog = loadRequirements().requirements,
): string | undefined {
  if (only.length === 0) return undefined
  const alternatives = [
    ...only.filter((x) => !isId(x)).map((area) => `${escape(area)}-\\d{3}`),
    ...[...selectedIds(only, catalog)].sort().map(escape),
  ]
  return `\\[(?:${alternatives.join('|')})\\]`
}

/** The suite's test files (relative to root: the repository, or the package's dist/), without the CLI's and the mutation test's own tests. */
export function suiteFiles(root: string): string[] {
  return readdirSync(join(root, 'conformance'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.test\.(ts|js)$/.test(f)) // .js: the package's compiled suite (dist/)
    .map((f) => `conformance/${f.split('\\').join('/')}`)
    .filter((f) => !f.startsWith('conformance/cli/') && !f.startsWith('conformance/mutants/'))
    .sort()
}

/** Whether a test file's source may hold a test of the selection (ids and areas, upper-case). */
export function mayHold(
  source: string,
  only: readonly string[],
  catalog: Catalog = loadRequirements().requirements,
): boolean {
  if (/\breq\((?!\s*['"])/.test(source)) return true
  const literals = [
    ...only.filter((x) => !isId(x)).map((area) => `${escape(area)}-\\d{3}`),
    ...[...selectedIds(only, catalog)].map(escape),
  ]
  if (literals.length === 0) return false
  return new RegExp(`['"](?:${literals.join('|')})['"]`).test(source)
}

/** The files to load for a selection (every suite file when nothing is selected). */
export function filesFor(root: string, only: readonly string[]): string[] {
  const files = suiteFiles(root)
  if (only.length === 0) return files
  return files.filter((f) => mayHold(readFileSync(join(root, f), 'utf8'), only))
}
