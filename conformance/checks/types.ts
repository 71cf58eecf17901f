/** What every response check receives. */
import type { Operation } from '../support/operations.js'

export type CheckedResponse = {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** Parsed JSON body when the response is JSON, else undefined. */
  body: unknown
  /** Raw text of the body (for SSE and binary checks); may be empty. */
  text: string
}

export type CheckContext = {
  method: string
  path: string
  operation: Operation | undefined
  response: CheckedResponse
  /** Undocumented response fields fail (true) or are warnings (false); default: isStrict() of support/strictness.ts. */
  strict?: boolean
}

/** A check returns nothing when the property holds and throws ConformanceFailure when it does not. */
export type ResponseCheck = {
  name: string
  /** Requirement ids of spec/requirements.yaml the check verifies on every response. */
  requirements: readonly string[]
  run(ctx: CheckContext): void
}

export const header = (res: CheckedResponse, name: string): string | undefined => {
  const v = res.headers[name.toLowerCase()]
  return Array.isArray(v) ? v.join(', ') : v
}

export const isJson = (res: CheckedResponse): boolean =>
  /^application\/(.+\+)?json/.test(header(res, 'content-type') ?? '')
