/** Benign variants: see ../variant.ts. */
import type { BenignVariant } from '../variant.js'

export const VARIANTS: readonly BenignVariant[] = []
