/** Loads spec/requirements.yaml: the catalog of the interface document's testable rules. */
import { readFileSync } from 'node:fs'
import { parseYaml, specFile } from './openapi.js'

export type Verify = 'real' | 'mock' | 'client'

export type Requirement = {
  id: string
  section: string
  rule: string
  verify: Verify
  codes: string[]
}

export type RequirementCatalog = {
  version: string
  sections: string[]
  areas: Record<string, string>
  requirements: Requirement[]
}

let cached: RequirementCatalog | undefined

/** Parses spec/requirements.yaml once per process. */
export function loadRequirements(): RequirementCatalog {
  cached ??= parseYaml(readFileSync(specFile('requirements.yaml'), 'utf8')) as RequirementCatalog
  return cached
}
