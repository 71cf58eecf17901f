/**
 * Values made from a key, kept for the last `size` keys (the oldest forgotten first): for work that a resend
 * repeats with the same input, such as a request body's digest. Held by one instance (deps or a route), never
 * at module level.
 */
export class Recent<V> {
  private readonly kept = new Map<string, V>()

  constructor(readonly size: number) {}

  /** The value kept for `key`, else the one `make` makes (then kept). */
  get(key: string, make: () => V): V {
    let value = this.kept.get(key)
    if (value !== undefined) return value
    value = make()
    if (this.kept.size >= this.size) this.kept.delete(this.kept.keys().next().value!)
    this.kept.set(key, value)
    return value
  }

  clear(): void {
    this.kept.clear()
  }
}
