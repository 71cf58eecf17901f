/** `npm run generate`: writes spec/generated/ from spec/openapi.yaml and spec/errors.yaml. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ROOT, renderAll } from './lib/generated.js'

for (const [path, contents] of Object.entries(await renderAll())) {
  mkdirSync(dirname(join(ROOT, path)), { recursive: true })
  writeFileSync(join(ROOT, path), contents)
  console.log(`wrote ${path}`)
}
