/**
 * Checks spec/requirements.yaml: ids unique and well-formed (AREA-NNN with a declared area), sections and
 * verify values valid, every section covered, every code a key of spec/errors.yaml, every error code named by
 * at least one requirement; and that every requirement id named in a test title exists.
 */
import { ERROR_CATALOG, loadRequirements } from '../spec/index.js'
import { ID_PATTERN, idsNamedByTests } from './lib/test-ids.js'

const catalog = loadRequirements()
const problems: string[] = []
const seen = new Set<string>()
const sections = new Set(catalog.sections)
const covered = new Set<string>()
const codesNamed = new Set<string>()

for (const [i, r] of catalog.requirements.entries()) {
  const where = `requirements[${i}] ${r.id ?? '(no id)'}`
  if (typeof r.id !== 'string' || !ID_PATTERN.test(r.id))
    problems.push(`${where}: id is not AREA-NNN`)
  else if (!(r.id.split('-')[0]! in catalog.areas))
    problems.push(`${where}: area is not declared in areas`)
  if (seen.has(r.id)) problems.push(`${where}: duplicate id`)
  seen.add(r.id)
  if (!sections.has(r.section)) problems.push(`${where}: section "${r.section}" is not in sections`)
  covered.add(r.section)
  if (!['real', 'mock', 'client'].includes(r.verify))
    problems.push(`${where}: verify must be real, mock or client`)
  if (typeof r.rule !== 'string' || r.rule.trim().length < 10)
    problems.push(`${where}: rule is missing`)
  if (!Array.isArray(r.codes)) problems.push(`${where}: codes must be a list`)
  for (const code of r.codes ?? []) {
    if (!(code in ERROR_CATALOG)) problems.push(`${where}: unknown error code ${code}`)
    codesNamed.add(code)
  }
}
for (const section of catalog.sections) {
  if (!covered.has(section)) problems.push(`section "${section}" has no requirement`)
}
for (const code of Object.keys(ERROR_CATALOG)) {
  if (!codesNamed.has(code)) problems.push(`error code ${code} is named by no requirement`)
}
for (const [id, files] of idsNamedByTests()) {
  if (!seen.has(id))
    problems.push(`test title names unknown requirement ${id} (${[...files].join(', ')})`)
}

if (problems.length > 0) {
  console.error(problems.join('\n'))
  console.error(`\nspec/requirements.yaml: ${problems.length} problem(s)`)
  process.exit(1)
}
console.log(
  `spec/requirements.yaml: ${catalog.requirements.length} requirements in ${catalog.sections.length} sections, all well-formed`,
)
