/** Deep freezing of plain data (parsed JSON, records, scenario steps). */

/** Freezes a value and everything it holds (plain objects and arrays); returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}
