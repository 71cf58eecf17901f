/**
 * `npm run coverage:requirements`: which requirements of spec/requirements.yaml the tests name, per section
 * and per verify class. `--uncovered` lists the ids no test names; `--json` prints the whole report.
 */
import { loadRequirements } from '../spec/index.js'
import { idsNamedByTests } from './lib/test-ids.js'

const { requirements, sections } = loadRequirements()
const named = idsNamedByTests()
const args = new Set(process.argv.slice(2))

const rows = requirements.map((r) => ({ ...r, tests: [...(named.get(r.id) ?? [])] }))
if (args.has('--json')) {
  // No process.exit here: it would cut a long report written to a pipe.
  console.log(JSON.stringify(rows, null, 2))
} else {
  printTable()
}

function printTable() {
  const pct = (a: number, b: number) =>
    b === 0 ? '  -' : `${Math.round((100 * a) / b)}%`.padStart(4)
  console.log('section'.padEnd(52), 'covered'.padStart(9), '')
  for (const section of sections) {
    const inSection = rows.filter((r) => r.section === section)
    const done = inSection.filter((r) => r.tests.length > 0).length
    console.log(
      section.slice(0, 51).padEnd(52),
      `${done}/${inSection.length}`.padStart(9),
      pct(done, inSection.length),
    )
  }
  console.log('')
  for (const verify of ['real', 'mock', 'client'] as const) {
    const inClass = rows.filter((r) => r.verify === verify)
    const done = inClass.filter((r) => r.tests.length > 0).length
    console.log(
      `verify ${verify}`.padEnd(52),
      `${done}/${inClass.length}`.padStart(9),
      pct(done, inClass.length),
    )
  }
  const total = rows.filter((r) => r.tests.length > 0).length
  console.log('all'.padEnd(52), `${total}/${rows.length}`.padStart(9), pct(total, rows.length))
  if (args.has('--uncovered')) {
    console.log('\nuncovered:')
    for (const r of rows.filter((x) => x.tests.length === 0)) console.log(`  ${r.id}  ${r.rule}`)
  }
}
