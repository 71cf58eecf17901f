/** Test-title prefix from requirement ids: req('IDEM-003', 'IDEM-004') -> "[IDEM-003][IDEM-004]". */
import { loadRequirements } from '../../spec/index.js'

const known = new Set(loadRequirements().requirements.map((r) => r.id))

export function req(...ids: string[]): string {
  for (const id of ids) {
    if (!known.has(id))
      throw new Error(`unknown requirement id ${id}: add it to spec/requirements.yaml`)
  }
  return ids.map((id) => `[${id}]`).join('')
}
