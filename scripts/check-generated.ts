/** Fails when spec/generated/ is not what `npm run generate` would write now. */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, renderAll } from './lib/generated.js'

let stale = 0
for (const [path, contents] of Object.entries(await renderAll())) {
  const file = join(ROOT, path)
  if (!existsSync(file) || readFileSync(file, 'utf8') !== contents) {
    console.error(
      `stale: ${path} differs from its source; run \`npm run generate\` and commit the result`,
    )
    stale++
  }
}
if (stale > 0) process.exit(1)
console.log('generated files are fresh')
