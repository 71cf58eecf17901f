/** Every benign variant (../variant.ts), from the files of this folder. */
import type { BenignVariant } from '../variant.js'
import { VARIANTS as PROTOCOL } from './protocol.js'
import { VARIANTS as RESOURCES } from './resources.js'

export const BENIGN_VARIANTS: readonly BenignVariant[] = [...PROTOCOL, ...RESOURCES]
