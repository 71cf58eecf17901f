/**
 * A synchronous publish/subscribe channel owned by one mock instance. Listeners run in subscription order,
 * inside the publisher's call (and so inside its transaction): they record work and defer I/O.
 */
export class Channel<Args extends unknown[]> {
  private readonly listeners: ((...args: Args) => void)[] = []

  /** Subscribes a listener; it stays for the life of the instance. */
  on(listener: (...args: Args) => void): void {
    this.listeners.push(listener)
  }

  /** Tells every listener, in subscription order. */
  emit(...args: Args): void {
    for (const listener of this.listeners) listener(...args)
  }

  /** How many listeners are subscribed (tests check that instances do not accumulate them). */
  get size(): number {
    return this.listeners.length
  }
}
