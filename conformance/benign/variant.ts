/**
 * A benign variant: a copy of the mock that makes another choice the interface document allows (where the
 * document is silent, marked `x-assumed` or "not shown", or where it gives a range). Served as a real target
 * (no control API), the suite in real-deployment mode must pass it: the twin of the mutation self-test
 * (conformance/mutants/), which shows that broken variants fail.
 */
import type { Patch } from '../mutants/variants.js'

export type BenignVariant = {
  name: string
  /** The other valid choice, and the document's words (or silence) that allow it. */
  choice: string
  /** Textual patches of the mock's copy (mock/, spec/, fixtures/), each `find` occurring exactly once. */
  patches: Patch[]
  /** Requirement ids or areas whose checks the variant runs (default: the whole suite). */
  select?: string[]
  /** The `x-assumed` marks or not-shown parts the variant chooses otherwise (for the coverage of marks). */
  assumptions?: string[]
}
