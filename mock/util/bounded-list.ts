/**
 * A list that keeps its newest `capacity` items, oldest first, and counts the items it dropped. Adding is
 * amortised O(1): dropped items are cut off in batches (once as many are dropped as are kept), never by
 * shifting the whole list on every add.
 */
export class BoundedList<T> {
  private items: T[] = []
  /** The items kept are items[start..]. */
  private start = 0
  /** Items dropped to stay within capacity since the last clear. */
  dropped = 0

  constructor(readonly capacity: number) {}

  push(item: T): void {
    this.items.push(item)
    if (this.items.length - this.start > this.capacity) {
      this.start += 1
      this.dropped += 1
      if (this.start >= this.capacity) {
        this.items = this.items.slice(this.start)
        this.start = 0
      }
    }
  }

  /** The items kept, oldest first. */
  list(): readonly T[] {
    return this.start === 0 ? this.items : this.items.slice(this.start)
  }

  clear(): void {
    this.items = []
    this.start = 0
    this.dropped = 0
  }
}
