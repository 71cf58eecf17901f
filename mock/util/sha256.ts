/**
 * SHA-256 of a string (UTF-8) or bytes, in one call: node:crypto's one-shot hash() where Node has it (20.12
 * and later; about half the cost of createHash for the short inputs of ids and fingerprints), else createHash.
 */
import crypto, { createHash } from 'node:crypto'

// Node before 20.12 has no hash() (a named import of it would not link there).
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined

/** The digest's 32 bytes. */
export const sha256 = (data: string | Uint8Array): Buffer =>
  oneShot ? oneShot('sha256', data, 'buffer') : createHash('sha256').update(data).digest()

/** The digest as 64 hex characters. */
export const sha256Hex = (data: string | Uint8Array): string =>
  oneShot ? oneShot('sha256', data, 'hex') : createHash('sha256').update(data).digest('hex')
