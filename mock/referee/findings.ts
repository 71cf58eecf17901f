/**
 * The referee's findings, oldest first, bounded: past `capacity` the oldest go first, and are counted. A
 * violation names one or two requests (rules.ts: the request that broke the rule, and the earlier one it
 * contradicts); their fields go into a ring of fixed slots, one array per field, and a violation is built
 * only when the findings are reported. A client polling faster than the document allows breaks a rule on
 * every request: an object per finding, kept until 1,000 newer ones pushed it out, lived just long enough to
 * be copied out of the young generation.
 */
import { RingSlots } from '../util/ring.js'
import { violationOf, type Found, type RuleName, type Seen, type Violation } from './rules.js'

/** One of the (at most two) requests of a finding, field by field. */
class RequestSlots {
  readonly methods: string[]
  readonly paths: string[]
  readonly requestIds: string[]
  readonly atMs: Float64Array

  constructor(capacity: number) {
    this.methods = new Array<string>(capacity).fill('')
    this.paths = new Array<string>(capacity).fill('')
    this.requestIds = new Array<string>(capacity).fill('')
    this.atMs = new Float64Array(capacity)
  }

  put(slot: number, r: Seen): void {
    this.methods[slot] = r.method
    this.paths[slot] = r.path
    this.requestIds[slot] = r.request_id
    this.atMs[slot] = r.atMs
  }

  at(slot: number): Seen {
    return {
      method: this.methods[slot]!,
      path: this.paths[slot]!,
      request_id: this.requestIds[slot]!,
      atMs: this.atMs[slot]!,
    }
  }

  clear(): void {
    this.paths.fill('')
    this.requestIds.fill('')
  }
}

export class Findings {
  private readonly rules: RuleName[]
  private readonly keys: string[]
  /** How many requests the finding names (1 or 2). */
  private readonly sizes: Uint8Array
  private readonly first: RequestSlots
  private readonly second: RequestSlots
  private readonly slots: RingSlots

  constructor(readonly capacity: number) {
    this.slots = new RingSlots(capacity)
    this.rules = new Array<RuleName>(capacity)
    this.keys = new Array<string>(capacity).fill('')
    this.sizes = new Uint8Array(capacity)
    this.first = new RequestSlots(capacity)
    this.second = new RequestSlots(capacity)
  }

  /** Findings dropped to stay within capacity since the last clear. */
  get dropped(): number {
    return this.slots.dropped
  }

  push(f: Found): void {
    if (f.requests.length < 1 || f.requests.length > 2)
      throw new Error(`a finding names one or two requests, not ${f.requests.length}`)
    const slot = this.slots.next()
    this.rules[slot] = f.rule
    this.keys[slot] = f.key
    this.sizes[slot] = f.requests.length
    this.first.put(slot, f.requests[0]!)
    if (f.requests.length === 2) this.second.put(slot, f.requests[1]!)
  }

  /** The findings kept, oldest first, as reported. */
  list(): Violation[] {
    return this.slots.kept().map((slot) => {
      const requests = [this.first.at(slot)]
      if (this.sizes[slot] === 2) requests.push(this.second.at(slot))
      return violationOf({ rule: this.rules[slot]!, key: this.keys[slot]!, requests })
    })
  }

  clear(): void {
    this.slots.clear()
    this.keys.fill('')
    this.first.clear()
    this.second.clear()
  }
}
