/**
 * GET /_mock/ui/state: the inspector's view of the whole instance at the current virtual time. Projects with
 * their keys, call-rate windows, SU balance and budget windows, Deployments, Workflows and webhook endpoints;
 * the recent Sessions and executions (Turns and Runs); the recent webhook deliveries with every attempt and the
 * retries still to come; the scenario queue, fault rules and referee findings. Bounded (the most recent
 * RECENT rows of each list). Secrets are redacted here, on the server (redact.ts): the page never gets one.
 */
import type { Deps } from '../deps.js'
import { effectiveLimit, WINDOW_MS, type RateClass } from '../domain/rate-limits.js'
import { budgetView } from '../execution/ledger.js'
import type { FaultRule } from '../faults/rules.js'
import { getDeployment, listDeployments } from '../store/deployments.js'
import {
  endpointsOfProject,
  rateWindows,
  recentDeliveries,
  recentExecutions,
  recentSessions,
  type ExecutionRow,
} from '../store/inspection.js'
import { getApiKey, listApiKeys, listProjects } from '../store/projects.js'
import { listScenarioQueue } from '../store/scenarios.js'
import { attemptsOf, type DeliveryRecord } from '../store/webhooks.js'
import { listWorkflows } from '../store/workflows.js'
import { MAX_ATTEMPTS, RETRY_OFFSETS_S } from '../webhooks/delivery.js'
import { redactScope, redactSecret, safeUrl } from './redact.js'
import { iso } from '../util/iso.js'

/** Rows of each recent list the state holds. */
export const RECENT = 200

const isoOrNull = (ms: number | null | undefined): string | null => iso(ms ?? null)

/** One Turn or Run as the lists show it. */
export function executionSummary(e: ExecutionRow) {
  const error = e.error_json === null ? null : (JSON.parse(e.error_json) as { code: string })
  const run = e.run_json === null ? null : (JSON.parse(e.run_json) as { deadline_at: number })
  return {
    id: e.id,
    kind: e.kind,
    project_id: e.project_id,
    api_key: redactSecret(e.api_key),
    deployment_id: e.deployment_id,
    session_id: e.session_id,
    workflow_id: e.workflow_id,
    status: e.status,
    error_code: error?.code ?? null,
    scenario: e.scenario,
    spent_su: e.spent_su,
    max_su: e.max_su,
    usage_status: e.usage_status,
    created_at: isoOrNull(e.created_at),
    started_at: isoOrNull(e.started_at),
    completed_at: isoOrNull(e.completed_at),
    deadline_at: isoOrNull(run?.deadline_at),
  }
}

/** A delivery with every attempt so far and the times of the attempts still to come. */
export function deliverySummary(deps: Deps, d: DeliveryRecord) {
  const upcoming: string[] = []
  if (d.status === 'PENDING') {
    if (d.first_attempt_at === null) {
      if (d.next_attempt_at !== null) upcoming.push(isoOrNull(d.next_attempt_at)!)
    } else {
      for (let n = Math.max(d.attempts, 1); n < MAX_ATTEMPTS; n += 1)
        upcoming.push(isoOrNull(d.first_attempt_at + RETRY_OFFSETS_S[n - 1]! * 1000)!)
    }
  }
  return {
    id: d.id,
    project_id: d.project_id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    replay_of: d.replay_of,
    created_at: isoOrNull(d.created_at),
    next_attempt_at: isoOrNull(d.next_attempt_at),
    // Each attempt's signature carries the virtual time it was made (Service-Signature t=).
    history: attemptsOf(deps.db, d.id).map((a) => ({
      attempt: a.attempt,
      signed_at: isoOrNull(a.attempted_at),
      http_status: a.http_status,
      error_code: a.error_code,
      outcome:
        a.http_status === null && a.error_code === null
          ? 'IN_FLIGHT'
          : a.error_code === null && a.http_status !== null && a.http_status < 300
            ? 'OK'
            : 'FAILED',
    })),
    retries_to_come: upcoming,
  }
}

function rateWindowView(deps: Deps, scope: string, startMs: number, count: number) {
  const [kind, ...rest] = scope.split(':')
  const cls = rest.at(-1) as RateClass
  const key = kind === 'key' ? getApiKey(deps.db, rest.slice(0, -1).join(':')) : undefined
  const override = cls === 'accept' ? key?.accept_per_minute : key?.read_per_minute
  const id = rest.slice(0, -1).join(':')
  const projectId =
    kind === 'key'
      ? key?.project_id
      : kind === 'deployment'
        ? getDeployment(deps.db, id)?.project_id
        : kind === 'project'
          ? id
          : undefined
  const nowMs = deps.clock.nowMs()
  return {
    project_id: projectId ?? null,
    scope: redactScope(scope),
    kind: kind ?? scope,
    rate_class: cls,
    count,
    limit: cls === 'accept' || cls === 'read' ? effectiveLimit(cls, override) : null,
    window_start: isoOrNull(startMs),
    resets_at: isoOrNull(startMs + WINDOW_MS),
    open: nowMs < startMs + WINDOW_MS,
  }
}

function faultView(rule: FaultRule) {
  return {
    ...rule,
    match:
      rule.match.key === undefined
        ? rule.match
        : { ...rule.match, key: redactSecret(rule.match.key) },
  }
}

/** The whole state the page shows. */
export function inspectorState(deps: Deps) {
  const { db, clock } = deps
  const windows = rateWindows(db, 1000).map((w) =>
    rateWindowView(deps, w.scope, w.start_ms, w.count),
  )
  const projects = listProjects(db).map((p) => ({
    id: p.id,
    name: p.name,
    approved: p.approved,
    owner_token: redactSecret(p.owner_token),
    su_balance: p.su_balance,
    storage_limit_bytes: p.storage_limit_bytes,
    budget: budgetView(deps, p.id) ?? null,
    keys: listApiKeys(db, p.id).map((k) => ({
      key: redactSecret(k.key),
      name: k.name,
      scopes: k.scopes,
      deployment_ids: k.deployment_ids,
      revoked: k.revoked,
      expires_at: isoOrNull(k.expires_at),
    })),
    rate_windows: windows.filter((w) => w.project_id === p.id),
    deployments: listDeployments(db, p.id).map((d) => ({
      id: d.id,
      name: d.name,
      status: d.status,
    })),
    workflows: listWorkflows(db, p.id).map((w) => ({
      id: w.id,
      name: w.name,
      published_version: w.published_version,
      available: w.available,
    })),
    webhook_endpoints: endpointsOfProject(db, p.id).map((e) => ({
      id: e.id,
      url: safeUrl(e.url),
      status: e.status,
      event_types:
        e.event_types_json === null ? null : (JSON.parse(e.event_types_json) as string[]),
      secret: redactSecret(e.secret),
      created_at: isoOrNull(e.created_at),
      rotated_at: isoOrNull(e.rotated_at),
      deleted_at: isoOrNull(e.deleted_at),
    })),
  }))
  const executions = recentExecutions(db, RECENT).map(executionSummary)
  const referee = deps.referee.report()
  return {
    now: clock.iso(),
    mode: clock.mode,
    next_timer_at: isoOrNull(deps.scheduler.nextDueMs()),
    projects,
    sessions: recentSessions(db, RECENT).map((s) => ({
      id: s.id,
      project_id: s.project_id,
      deployment_id: s.deployment_id,
      status: s.deleted_at === null ? s.status : 'DELETED',
      workflow_run_id: s.workflow_run_id,
      created_at: isoOrNull(s.created_at),
      last_activity_at: isoOrNull(s.last_activity_at),
    })),
    executions,
    deliveries: recentDeliveries(db, RECENT).map((d) => deliverySummary(deps, d)),
    scenario_queue: listScenarioQueue(db),
    faults: deps.faults.list().map(faultView),
    referee: {
      violations: referee.violations.map((v) => ({ ...v, key: redactSecret(v.key) })),
      dropped: referee.dropped,
    },
  }
}

export type InspectorState = ReturnType<typeof inspectorState>
