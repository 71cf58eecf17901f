/**
 * Memos of pure computations (a compiled JSON Schema, a parsed file that never changes): the only kind of
 * module-level value in mock/ that is built after load. What they hold is the same for every mock instance
 * and never changes, so no instance can observe another through them. State lives on the instance (deps).
 */

/** A value made on first use and kept. */
export function lazy<T>(make: () => T): () => T {
  const box: { value?: T; made: boolean } = { made: false }
  return () => {
    if (!box.made) {
      box.value = make()
      box.made = true
    }
    return box.value as T
  }
}

/** A pure function of a string key, computed once per key. */
export function memoize<V>(compute: (key: string) => V): (key: string) => V {
  const results = new Map<string, V>()
  return (key) => {
    if (!results.has(key)) results.set(key, compute(key))
    return results.get(key) as V
  }
}

/**
 * A pure function of a number whose recent results are kept (all forgotten at once when `size` are kept): for
 * values asked for again and again, such as the instants of a polled resource.
 */
export function memoizeRecent<V>(compute: (key: number) => V, size: number): (key: number) => V {
  const results = new Map<number, V>()
  return (key) => {
    let value = results.get(key)
    if (value === undefined) {
      value = compute(key)
      if (results.size >= size) results.clear()
      results.set(key, value)
    }
    return value
  }
}

/**
 * A pure function of an object frozen all the way down (the caller's word: Object.isFrozen sees only the top),
 * computed once per object and kept while the object lives; an object that is not frozen could change, so it
 * is computed every time.
 */
export function memoizeFrozen<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const results = new WeakMap<K, V>()
  return (key) => {
    if (!Object.isFrozen(key)) return compute(key)
    if (!results.has(key)) results.set(key, compute(key))
    return results.get(key) as V
  }
}

/** A half-open interval [startMs, endMs) of numbers (instants). */
type Interval = { startMs: number; endMs: number }

/**
 * A pure function of a number that returns the interval holding it (a UTC day or month): the last interval
 * is kept, frozen, and returned again while the numbers asked for fall inside it (an instant asked for again
 * and again, or a clock moving within one day).
 */
export function memoizeInterval<I extends Interval>(
  compute: (x: number) => I,
): (x: number) => Readonly<I> {
  let last: Readonly<I> | undefined
  return (x) => {
    if (last === undefined || !(x >= last.startMs && x < last.endMs))
      last = Object.freeze(compute(x))
    return last
  }
}
