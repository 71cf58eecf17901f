/**
 * A receipt offered to the execution a request creates (schema 330): the route offers the request's key,
 * fingerprint and expiry before its handler runs; the first execution inserted while the offer stands takes it
 * into its row (insertExecution) and is noted as the carrier. Whether the receipt stays carried is the route's
 * decision once the handler answered (the answer must be the one the row rebuilds); a rollback after the
 * carrier's insert forgets the carrier, and the route then stores a receipt row as before.
 */
import type { Db } from './db.js'

/** What an execution's row carries of a receipt. */
export type CarriedReceipt = { key: string; fingerprint: string; expires_at: number }

/** The execution a carried receipt's answer is rebuilt from (http/receipt-bodies.ts). */
export type CarriedAnswer = { kind: 'TURN' | 'RUN'; id: string; session_id: string | null }

/** The execution that took the offer. */
export type Carrier = CarriedAnswer & { seq: number }

type Slot = { offered: CarriedReceipt | undefined; carrier: Carrier | undefined }

const makeSlot = (db: Db): Slot => {
  const slot: Slot = { offered: undefined, carrier: undefined }
  db.onRollback(() => {
    slot.carrier = undefined
  })
  return slot
}

const slotOf = (db: Db): Slot => db.own('carried-receipt', makeSlot)

/** Runs fn with the receipt offered to the first execution it inserts; returns fn's result and that execution. */
export function offeringReceipt<T>(
  db: Db,
  receipt: CarriedReceipt,
  fn: () => T,
): { result: T; carrier: Carrier | undefined } {
  const slot = slotOf(db)
  slot.offered = receipt
  try {
    const result = fn()
    return { result, carrier: slot.carrier }
  } finally {
    slot.offered = undefined
    slot.carrier = undefined
  }
}

/** The receipt on offer, taken (the first insert takes it; later ones find none). */
export function takeOfferedReceipt(db: Db): CarriedReceipt | undefined {
  const slot = slotOf(db)
  const offered = slot.offered
  slot.offered = undefined
  return offered
}

/** Notes the execution that took the offer (after its insert). */
export function noteCarrier(db: Db, carrier: Carrier): void {
  slotOf(db).carrier = carrier
}
