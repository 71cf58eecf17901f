/**
 * List responses (Limits > Sizes and counts): at most 100 items and 256 KiB, 50 by default. A page ends
 * before the response would pass 256 KiB, and then carries a next_cursor to the rest (never a truncated item).
 * Pure: what fits is measured on the JSON the response will carry.
 */

/** SIZE-014: a list response is at most 256 KiB (its JSON body in UTF-8). */
export const MAX_LIST_BYTES = 256 * 1024
/** SIZE-014: at most 100 items per page; 50 by default. */
export const MAX_LIST_ITEMS = 100
export const DEFAULT_LIST_ITEMS = 50

/**
 * How many of `items` (in order) fit a page whose other content (the body around the list, cursor included)
 * takes `overheadBytes`: each item costs its JSON bytes and a separating comma. At least one item is always
 * given (a single item is bounded by its own limits, e.g. 64 KiB of inline TEXT), so paging always advances.
 */
export function fittingCount(
  items: readonly unknown[],
  /** The overhead, or how to measure it: measured only when a second item is weighed. */
  overheadBytes: number | (() => number),
  /** The item's listItemBytes when already known. */
  knownBytes?: (item: unknown, index: number) => number | undefined,
): number {
  let bytes = 0
  let overhead: number | undefined
  let n = 0
  for (const [i, item] of items.entries()) {
    const size = knownBytes?.(item, i) ?? listItemBytes(JSON.stringify(item))
    if (n > 0) {
      overhead ??= typeof overheadBytes === 'number' ? overheadBytes : overheadBytes()
      if (overhead + bytes + size > MAX_LIST_BYTES) break
    }
    bytes += size
    n++
  }
  return n
}

/** The bytes an item's JSON text takes in a list (with its separating comma). */
export const listItemBytes = (json: string): number => Buffer.byteLength(json) + 1

/**
 * The bytes of a page's body without its items: the JSON of `body` with an empty list, plus room for a cursor
 * (a next_cursor of up to 256 characters replacing null).
 */
export const pageOverheadBytes = (body: unknown): number =>
  Buffer.byteLength(JSON.stringify(body)) + 256
