/**
 * The slot arithmetic of a ring of `capacity` fixed slots that keeps the newest items (the request journal,
 * the referee's findings): item i since the last clear lives in slot i % capacity; past capacity the oldest
 * are overwritten and counted as dropped. The caller keeps the items' fields in arrays of its own.
 */
export class RingSlots {
  /** Items added since the last clear. */
  added = 0

  constructor(readonly capacity: number) {}

  /** The slot of the next item (and counts it). */
  next(): number {
    const slot = this.added % this.capacity
    this.added += 1
    return slot
  }

  /** Items overwritten since the last clear. */
  get dropped(): number {
    return Math.max(0, this.added - this.capacity)
  }

  /** The slots of the items kept, oldest first. */
  kept(): number[] {
    const slots: number[] = []
    for (let i = this.added - Math.min(this.added, this.capacity); i < this.added; i++)
      slots.push(i % this.capacity)
    return slots
  }

  /** The slot of the item added `back` items ago (0: the newest), or undefined when it is no longer kept. */
  back(back: number): number | undefined {
    if (back < 0 || back >= Math.min(this.added, this.capacity)) return undefined
    return (this.added - 1 - back) % this.capacity
  }

  clear(): void {
    this.added = 0
  }
}
