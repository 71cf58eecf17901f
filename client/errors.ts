/** The reference client's errors: a refused answer, a network failure, a file that fails its sha256 check. */
import type { components } from '../spec/generated/openapi.js'

export type ErrorEnvelope = components['schemas']['ErrorEnvelope']

/** An answer with retryable false, or a retryable one after the retry caps: not resent. */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly retryable: boolean,
    readonly envelope: ErrorEnvelope | undefined,
    readonly attempts: number,
  ) {
    super(
      `${status}${code ? ` ${code}` : ''}${retryable ? ' (retryable, retries exhausted)' : ''}: ${
        envelope?.error.message ?? 'no error envelope'
      }`,
    )
    this.name = 'ServiceError'
  }
}

/** A network failure on every attempt (dropped connections, timeouts) within the retry caps. */
export class NetworkError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly attempts: number,
  ) {
    super(`network failure after ${attempts} attempt(s): ${String(cause)}`)
    this.name = 'NetworkError'
  }
}

/** A downloaded file whose bytes do not match the sha256 of its output (ART-010). */
export class IntegrityError extends Error {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`downloaded file sha256 ${actual} does not match the expected ${expected}`)
    this.name = 'IntegrityError'
  }
}
