/**
 * At the end of a run on a real target, and when the run is interrupted (SIGINT, SIGTERM), the executions the
 * run started and that may still run (and spend) are ended: the ledger (support/pace.ts) learned each one from
 * its 202 receipt.
 *   - a Run: POST /v1/runs/{run_id}/cancel with an Idempotency-Key and `{}`. A Run already terminal answers 200
 *     unchanged (STATE-011), so no read is needed first; 202 is a cancel started.
 *   - a Turn: the document shows no Turn cancel path; DELETE /v1/sessions/{session_id} (Idempotency-Key, `{}`)
 *     cancels its running execution (SESSION_DELETED). A Session is the suite's own data, but deleting it also
 *     blocks its reads at once, so only a Session with a Turn that has not ended is deleted: each of its Turns is
 *     read first (GET /v1/sessions/{session_id}/turns/{turn_id}), and Sessions whose Turns all ended are kept
 *     for whoever wants to look at them after the run.
 * Every request takes a Read slot of the run's ledger (cancel, delete and reads are the Read class) and is sent
 * again, the same request, after a 429 or a proxy's bare 502/503/504 (retry rule 5), a few times.
 */
import type { CallClass, Started } from '../support/pace.js'

/** What the cleanup needs of the run's ledger. */
export type CleanupLedger = {
  slot(cls: CallClass, wait: boolean): Promise<number>
  startedExecutions(): Started[]
}

export type CleanupOptions = {
  baseUrl: string
  ledger: CleanupLedger
  /** The key to use for an execution whose key is unknown, or when its own key is refused (403). */
  fallbackKey?: string
  /** Waits (tests record them instead). */
  wait?: (ms: number) => Promise<void>
  /** Per-request timeout (default 20 s). */
  timeoutMs?: number
}

export type CleanupReport = {
  /** Runs whose cancel was accepted (202). */
  runsCanceled: string[]
  /** Sessions deleted because a Turn of theirs had not ended. */
  sessionsDeleted: string[]
  /** Executions that had ended already (a 200 cancel answer, every Turn terminal). */
  ended: number
  /** Executions no longer there (404, 410: deleted by a test, or expired). */
  gone: number
  /** What could not be ended, with the answer. */
  failed: string[]
}

const TERMINAL = new Set(['SUCCEEDED', 'PARTIALLY_SUCCEEDED', 'FAILED', 'CANCELED', 'EXPIRED'])
const RESENDS = 3
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

type Answer = { status: number; body: unknown }

/** Cancels the run's Runs that have not ended and deletes its Sessions whose Turn has not ended. */
export async function cancelStarted(options: CleanupOptions): Promise<CleanupReport> {
  const wait = options.wait ?? sleep
  const report: CleanupReport = {
    runsCanceled: [],
    sessionsDeleted: [],
    ended: 0,
    gone: 0,
    failed: [],
  }

  const send = async (
    method: string,
    path: string,
    key: string,
    idem?: string,
  ): Promise<Answer | string> => {
    for (let attempt = 0; ; attempt++) {
      const ms = await options.ledger.slot('read', true)
      if (ms > 0) await wait(ms)
      let res: Response
      try {
        res = await fetch(`${options.baseUrl}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${key}`,
            ...(idem === undefined
              ? {}
              : { 'Idempotency-Key': idem, 'Content-Type': 'application/json' }),
          },
          ...(idem === undefined ? {} : { body: '{}' }),
          signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
        })
      } catch (error) {
        if (attempt < RESENDS) continue // a network failure: the same request again (retry rule 1)
        return `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`
      }
      const text = await res.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON
      }
      const retryable = res.status === 429 || (res.status >= 502 && res.status <= 504)
      if (!retryable || attempt >= RESENDS) return { status: res.status, body }
      const retryAfter = Number(res.headers.get('retry-after'))
      await wait(
        Number.isFinite(retryAfter) && retryAfter >= 0 ? Math.min(retryAfter, 60) * 1000 : 1000,
      )
    }
  }

  /** Sends with the execution's key, then with the fallback key when that one is refused. */
  const sendAs = async (
    execution: Started,
    method: string,
    path: string,
    idem?: string,
  ): Promise<Answer | string> => {
    const keys = [...new Set([execution.key, options.fallbackKey])].filter(
      (k): k is string => k !== undefined,
    )
    if (keys.length === 0) return `${method} ${path}: no API key`
    let answer: Answer | string = ''
    for (const key of keys) {
      answer = await send(method, path, key, idem)
      if (typeof answer === 'string' || (answer.status !== 401 && answer.status !== 403)) break
    }
    return answer
  }

  const describe = (a: Answer | string) => {
    if (typeof a === 'string') return a
    const code = (a.body as { error?: { code?: string } } | null)?.error?.code
    return `${a.status}${code ? ` ${code}` : ''}`
  }

  const executions = options.ledger.startedExecutions()
  for (const e of executions) {
    if (e.kind !== 'run') continue
    const path = `/v1/runs/${encodeURIComponent(e.runId)}/cancel`
    const answer = await sendAs(e, 'POST', path, `conformance-cleanup-cancel-${e.runId}`)
    if (typeof answer !== 'string' && answer.status === 202) report.runsCanceled.push(e.runId)
    else if (typeof answer !== 'string' && answer.status === 200) report.ended++
    else if (typeof answer !== 'string' && (answer.status === 404 || answer.status === 410))
      report.gone++
    else report.failed.push(`Run ${e.runId}: POST ${path} answered ${describe(answer)}`)
  }

  const sessions = new Map<string, Extract<Started, { kind: 'turn' }>[]>()
  for (const e of executions)
    if (e.kind === 'turn') sessions.set(e.sessionId, [...(sessions.get(e.sessionId) ?? []), e])
  for (const [sessionId, turns] of sessions) {
    const session = `/v1/sessions/${encodeURIComponent(sessionId)}`
    let running: Started | undefined
    let unknown: string | undefined
    let gone = 0
    for (const t of turns) {
      const answer = await sendAs(t, 'GET', `${session}/turns/${encodeURIComponent(t.turnId)}`)
      if (typeof answer === 'string') unknown = answer
      else if (answer.status === 404 || answer.status === 410) gone++
      else if (answer.status !== 200) unknown = describe(answer)
      else if (!TERMINAL.has(String((answer.body as { status?: unknown } | null)?.status)))
        running = t
      if (running) break
    }
    if (!running) {
      if (unknown) report.failed.push(`Session ${sessionId}: a Turn read answered ${unknown}`)
      else if (gone === turns.length) report.gone += turns.length
      else report.ended += turns.length - gone
      continue
    }
    const answer = await sendAs(
      running,
      'DELETE',
      session,
      `conformance-cleanup-delete-${sessionId}`,
    )
    if (typeof answer !== 'string' && answer.status === 202) report.sessionsDeleted.push(sessionId)
    else if (typeof answer !== 'string' && (answer.status === 404 || answer.status === 410))
      report.gone++
    else report.failed.push(`Session ${sessionId}: DELETE ${session} answered ${describe(answer)}`)
  }
  return report
}

/** One line for the CLI's output. */
export function cleanupLine(r: CleanupReport): string {
  return (
    `cleanup: ${r.runsCanceled.length} Runs canceled, ${r.sessionsDeleted.length} Sessions with a running Turn ` +
    `deleted, ${r.ended} executions had ended, ${r.gone} were gone` +
    (r.failed.length > 0 ? `, ${r.failed.length} could not be ended` : '')
  )
}
