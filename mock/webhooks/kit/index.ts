/**
 * The webhook receiver kit: verifySignature() and Deduplicator, pure functions for integrators' receivers
 * (Webhook notifications). Nothing here imports the mock; scripts/webhook-receiver.ts shows them in use.
 */
export {
  ROTATION_OVERLAP_S,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_S,
  parseSignatureHeader,
  verifySignature,
  type ParsedSignature,
  type VerifyFailure,
  type VerifyInput,
  type VerifyResult,
} from './verify.js'
export {
  DEDUP_RETENTION_MS,
  Deduplicator,
  MemoryDedupStore,
  bodySha256,
  type DedupEntry,
  type DedupStore,
  type DedupVerdict,
  type DeduplicatorOptions,
} from './dedup.js'
