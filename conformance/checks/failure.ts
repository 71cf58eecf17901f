/** A named check that failed on one response: which check, on which operation, with the request id to quote. */
export class ConformanceFailure extends Error {
  constructor(
    readonly check: string,
    message: string,
    readonly operationId: string | undefined,
    readonly requestId: string | undefined,
    readonly requirement?: string,
  ) {
    super(
      `[${check}]${requirement ? `[${requirement}]` : ''} ${operationId ?? 'undocumented operation'}: ${message}` +
        (requestId ? ` (request_id ${requestId})` : ''),
    )
    this.name = 'ConformanceFailure'
  }
}
