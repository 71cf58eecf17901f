/**
 * GET /_mock/ui/executions/{id}: one Turn or Run on the virtual time axis. Entries that happened (status
 * changes and every other public event, outputs, the script steps that fired with the SU they spent, the
 * settled ledger, interactive actions, webhook attempts with their signature time and outcome) and what is
 * still pending (script steps, queue timeout, time limit, Run deadline, cancel confirmation, webhook retries),
 * each with its virtual time. Event data are summarised, never shown whole (no body, key or token).
 */
import type { Deps } from '../deps.js'
import type { ScenarioStep } from '../execution/scenarios.js'
import {
  actionsOfExecution,
  deliveriesOfExecution,
  eventsOfExecution,
  executionRow,
  ledgerOfExecution,
  timersOfSubject,
  type EventRow,
  type ExecutionRow,
  type TimerRow,
} from '../store/inspection.js'
import { QUEUE_TIMEOUT } from '../execution/queue-timeouts.js'
import { timerIdOf } from '../store/timers.js'
import { deliverySummary, executionSummary } from './snapshot.js'
import { iso } from '../util/iso.js'

export type TimelineEntry = {
  /** Virtual time (ISO 8601 UTC). */
  at: string
  /** status | event | output | step | spend | action | webhook | created */
  kind: string
  label: string
  detail: string
}

/** The names of the execution's own timers, as the page shows them. */
const TIMER_LABELS: Readonly<Record<string, string>> = {
  'execution.queue-timeout': 'queue timeout (QUEUE_TIMEOUT)',
  'execution.time-limit': 'time limit (EXECUTION_TIMEOUT)',
  'run.deadline': 'Run deadline (RUN_DEADLINE_EXCEEDED)',
  'run.cancel-confirmed': 'cancel confirmed',
  'execution.cancel': 'cancel',
}

/** A step of the script in a few words. */
function stepText(step: ScenarioStep): string {
  switch (step.step) {
    case 'spend':
      return `spend ${step.su} SU`
    case 'fail':
      return `fail ${step.status ?? 'FAILED'} ${step.code}`
    case 'output':
      return `output ${String((step.output as { type?: unknown }).type ?? '')}`.trim()
    default:
      return step.step
  }
}

/** At most 160 characters of a text. */
const short = (text: string): string => (text.length > 160 ? `${text.slice(0, 159)}…` : text)

/** An event's data in one line: its status and error code, or its content's kind and a text preview. */
function eventDetail(row: EventRow): string {
  const data = JSON.parse(row.data_json) as Record<string, unknown>
  const parts: string[] = []
  if (row.status) parts.push(row.status)
  const error = data.error as { code?: unknown } | undefined
  if (error && typeof error.code === 'string') parts.push(error.code)
  const content = (data.content ?? data.item) as Record<string, unknown> | undefined
  if (content && typeof content === 'object') {
    if (typeof content.kind === 'string') parts.push(content.kind)
    if (typeof content.type === 'string') parts.push(content.type)
    if (typeof content.text === 'string') parts.push(short(content.text))
    if (typeof content.phase === 'string') parts.push(content.phase)
  }
  return parts.join(' · ')
}

const eventKind = (row: EventRow): string =>
  row.status !== null
    ? 'status'
    : /output|artifact|result/.test(row.type)
      ? 'output'
      : /action/.test(row.type)
        ? 'action'
        : 'event'

/**
 * An open execution's queue timeout is pending until its deadline, whether or not its Project's timer holds
 * it now (execution/queue-timeouts.ts): shown among its timers at its key (due_at, seq).
 */
function withQueueTimeout(timers: TimerRow[], row: ExecutionRow, nowMs: number): TimerRow[] {
  const due = row.queue_due_at
  const seq = row.queue_timer_seq
  if (row.terminal !== 0 || due === null || seq === null || due <= nowMs) return timers
  const queueTimeout: TimerRow = {
    id: timerIdOf(due, seq),
    due_at: due,
    seq,
    kind: QUEUE_TIMEOUT,
    payload_json: JSON.stringify({ id: row.id }),
  }
  return [...timers, queueTimeout].sort((a, b) => a.due_at - b.due_at || a.seq - b.seq)
}

/** The timeline of one execution, or undefined when there is none with that id. */
export function executionTimeline(deps: Deps, id: string) {
  const { db, clock } = deps
  const row = executionRow(db, id)
  if (!row) return undefined
  const nowMs = clock.nowMs()
  const entries: (TimelineEntry & { ms: number; order: number })[] = []
  const add = (ms: number, kind: string, label: string, detail = '') =>
    entries.push({ ms, at: iso(ms), kind, label, detail, order: entries.length })

  add(row.created_at, 'created', `${row.kind === 'RUN' ? 'Run' : 'Turn'} accepted`, row.scenario)
  for (const e of eventsOfExecution(db, id, 2000))
    add(e.created_at, eventKind(e), e.type, eventDetail(e))

  const steps = JSON.parse(row.steps_json) as ScenarioStep[]
  const timers = withQueueTimeout(timersOfSubject(db, id, 500), row, nowMs)
  const pendingSteps = new Set(
    timers
      .filter((t) => t.kind === 'execution.step')
      .map((t) => (JSON.parse(t.payload_json) as { index: number }).index),
  )
  const actions = actionsOfExecution(db, id)
  // The script's times are offsets from admission; an execution that paused for an action was re-armed, so
  // only an unpaused one shows its fired steps at their times.
  if (row.admitted_at !== null && actions.length === 0) {
    steps.forEach((step, index) => {
      const ms = row.admitted_at! + step.at * 1000
      if (!pendingSteps.has(index) && ms <= nowMs)
        add(ms, step.step === 'spend' ? 'spend' : 'step', `script: ${stepText(step)}`)
    })
  }
  for (const l of ledgerOfExecution(db, id))
    add(l.settled_at, 'spend', `settled ${l.su} SU`, l.category)
  for (const a of actions) {
    add(a.created_at, 'action', `${a.kind} action`, a.id)
    if (a.resolved_at !== null) add(a.resolved_at, 'action', `${a.kind} action ${a.status}`, a.id)
  }
  const deliveries = deliveriesOfExecution(db, id, 200).map((d) => deliverySummary(deps, d))
  for (const d of deliveries) {
    for (const a of d.history)
      add(
        Date.parse(a.signed_at!),
        'webhook',
        `webhook ${d.event_type} attempt ${a.attempt}`,
        [a.outcome, a.http_status ?? '', a.error_code ?? ''].filter((x) => x !== '').join(' · '),
      )
  }
  entries.sort((a, b) => a.ms - b.ms || a.order - b.order)

  const pending: TimelineEntry[] = timers.map((t) => {
    const payload = JSON.parse(t.payload_json) as { index?: number }
    const step = t.kind === 'execution.step' ? steps[payload.index ?? -1] : undefined
    // The queue timeout stays armed after the start, and then does nothing when it fires.
    const idle = t.kind === QUEUE_TIMEOUT && row.status !== 'QUEUED'
    return {
      at: iso(t.due_at),
      kind: t.kind === 'execution.step' ? 'step' : 'timer',
      label: step ? `script: ${stepText(step)}` : (TIMER_LABELS[t.kind] ?? t.kind),
      detail: idle ? `${t.kind} (no effect: it has started)` : t.kind,
    }
  })
  for (const d of deliveries)
    for (const at of d.retries_to_come)
      pending.push({ at, kind: 'webhook', label: `webhook ${d.event_type} retry`, detail: d.id })
  pending.sort((a, b) => a.at.localeCompare(b.at))

  return {
    now: clock.iso(),
    execution: executionSummary(row),
    entries: entries.map(({ at, kind, label, detail }) => ({ at, kind, label, detail })),
    pending,
    deliveries,
  }
}
