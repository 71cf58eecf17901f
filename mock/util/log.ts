/**
 * Structured logging: one JSON object per line. Request lines never carry keys, tokens or bodies.
 */

export type LogFields = Record<string, unknown>

export interface Log {
  info(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  /** false: per-request lines are dropped, so the request logger need not build them. */
  readonly requestLines?: boolean
}

/** Writes JSON lines to stdout (info) and stderr (error). */
export function jsonLog(
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
  err: (line: string) => void = (l) => process.stderr.write(l + '\n'),
): Log {
  return {
    info: (msg, fields) => out(JSON.stringify({ level: 'info', msg, ...fields })),
    error: (msg, fields) => err(JSON.stringify({ level: 'error', msg, ...fields })),
  }
}

/** The same log without the per-request lines (--quiet): errors and other events still go through. */
export function withoutRequestLines(log: Log): Log {
  return {
    info: (msg, fields) => {
      if (msg !== 'request') log.info(msg, fields)
    },
    error: (msg, fields) => log.error(msg, fields),
    requestLines: false,
  }
}

/** Drops everything (the default in tests). */
export const silentLog: Log = { info: () => {}, error: () => {}, requestLines: false }

/** Keeps every line in memory, for tests that assert on logging. */
export function memoryLog(): Log & { lines: ({ level: string; msg: string } & LogFields)[] } {
  const lines: ({ level: string; msg: string } & LogFields)[] = []
  return {
    lines,
    info: (msg, fields) => lines.push({ level: 'info', msg, ...fields }),
    error: (msg, fields) => lines.push({ level: 'error', msg, ...fields }),
  }
}
