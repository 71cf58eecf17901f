/**
 * The mock's side of Webhook notifications 2-4: the Service-Signature header of one attempt, with the unix
 * seconds of the virtual clock at that attempt. Deliberately separate from the receiver kit (kit/verify.ts):
 * the two are tested against each other and against an independent implementation.
 */
import { createHmac } from 'node:crypto'

/** Unix seconds of a virtual time in ms (rule 2: 1 to 12 digits). */
export const unixSeconds = (nowMs: number): number => Math.floor(nowMs / 1000)

/** WHN-009: hex HMAC-SHA256 keyed with the full secret over the ASCII timestamp, '.', the raw bytes. */
export function signatureV1(secret: string, t: number, rawBody: Uint8Array): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.from(`${t}.`, 'ascii'))
    .update(rawBody)
    .digest('hex')
}

/** WHN-008, WHN-012: `t=<unix seconds>,v1=<64 lowercase hex>`, fresh for every attempt. */
export function signatureHeader(secret: string, nowMs: number, rawBody: Uint8Array): string {
  const t = unixSeconds(nowMs)
  return `t=${t},v1=${signatureV1(secret, t, rawBody)}`
}
