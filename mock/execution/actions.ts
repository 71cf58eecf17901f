/**
 * The interactive-action engine (States and transitions: REQUIRES_ACTION; Approval handling rules 1-6), on
 * when the Project has the facility (fixture `interactive_actions` or the control toggle). An action_required
 * step stores an action, pauses the script (remaining steps and the execution time limit are taken off the
 * clock) and puts the execution in REQUIRES_ACTION. Resolving resumes the script from now (or ends the Run on
 * REJECT_JOB); the action's expiry ends the execution EXPIRED with ACTION_EXPIRED; any other end of the
 * execution cancels the action (ACTION_CANCELED).
 */
import type { components } from '../../spec/index.js'
import type { TimerKinds } from '../clock/timer-kinds.js'
import type { Deps } from '../deps.js'
import {
  answerProblems,
  approvalMaterial,
  contentHash,
  DECISIONS,
  decisionAllowed,
  DEFAULT_ACTION_EXPIRY_S,
  defaultActionSpec,
  type ActionSpec,
  type ApprovalMaterial,
} from '../domain/actions.js'
import { ApiError } from '../errors.js'
import {
  getAction,
  insertAction,
  interactiveActionsEnabled,
  pendingActions,
  saveAction,
  timeLimitDueAt,
  type ActionRecord,
  type ActionStatus,
} from '../store/actions.js'
import { getExecution, type ExecutionRecord } from '../store/executions.js'
import { finishExecution, setStatus, type ExecutionEvent } from './lifecycle.js'
import { storeExecutionArtifact } from './outputs.js'
import type { ScenarioStep } from './scenarios.js'
import { iso } from '../util/iso.js'

type ActionStep = Extract<ScenarioStep, { step: 'action_required' }>

/**
 * The executor's hook for an action_required step. True when the execution now waits in REQUIRES_ACTION (or
 * is already being ended); false when the facility is not provided, so the executor keeps the beta rule
 * (FAILED, ACTION_REQUIRED_UNSUPPORTED). A Turn has no approval path: its approval actions stay unsupported.
 */
export function requireAction(
  deps: Deps,
  e: ExecutionRecord,
  step: ActionStep,
  index: number,
): boolean {
  if (!interactiveActionsEnabled(deps.db, e.project_id)) return false
  const spec = step.action ?? defaultActionSpec(e.kind)
  if (e.kind === 'TURN' && spec.kind === 'APPROVAL') return false
  if (e.status !== 'RUNNING' && e.status !== 'QUEUED') return true
  const nowMs = deps.clock.nowMs()
  const limitDue = timeLimitDueAt(deps.db, e.id)
  const id = deps.ids.uuid()
  const action: ActionRecord = {
    id,
    execution_id: e.id,
    project_id: e.project_id,
    kind: spec.kind,
    status: 'PENDING',
    material: spec.kind === 'APPROVAL' ? withReviewFiles(deps, e, id, spec) : null,
    questions: spec.kind === 'QUESTION' ? spec.questions : null,
    content_available: true,
    step_index: index,
    // The wait for a person is not execution time: the time limit's remainder is re-armed on resume.
    time_left_ms: limitDue === undefined ? null : Math.max(0, limitDue - nowMs),
    created_at: nowMs,
    expires_at: nowMs + (step.expires_after_s ?? DEFAULT_ACTION_EXPIRY_S) * 1000,
    resolved_at: null,
    resolution: null,
  }
  insertAction(deps.db, action)
  deps.scheduler.cancelSubject(e.id, 'execution.step')
  deps.scheduler.cancelSubject(e.id, 'execution.time-limit')
  deps.scheduler.schedule('action.expire', action.expires_at, { id: action.id }, { subject: e.id })
  // STATE-023: REQUIRES_ACTION; the status listeners emit run.action_required with the action id.
  setStatus(deps, e, 'REQUIRES_ACTION')
  return true
}

/**
 * The review material of an approval, its review files (ACT-021) stored as artifacts of the execution (kept
 * as its result files are) and listed in review_files, so the content hash covers them.
 */
function withReviewFiles(
  deps: Deps,
  e: ExecutionRecord,
  actionId: string,
  spec: Extract<ActionSpec, { kind: 'APPROVAL' }>,
): ApprovalMaterial {
  const material = approvalMaterial(spec)
  if (!spec.review_files) return material
  material.review_files = spec.review_files.map((f) => {
    const stored = storeExecutionArtifact(deps, e, {
      filename: f.filename,
      mimeType: f.mime_type,
      bytes: new Uint8Array(Buffer.from(f.text, 'utf8')),
      reviewActionId: actionId,
    })
    return {
      artifact_id: stored.artifact_id!,
      filename: stored.filename,
      mime_type: stored.mime_type,
      size_bytes: stored.size_bytes,
      sha256: stored.sha256,
    }
  })
  return material
}

/** Puts the script back on the clock: the steps after the action keep their spacing, counted from now. */
function resume(deps: Deps, e: ExecutionRecord, action: ActionRecord): void {
  const nowMs = deps.clock.nowMs()
  const base = e.steps[action.step_index]?.at ?? 0
  for (let index = action.step_index + 1; index < e.steps.length; index++) {
    const at = e.steps[index]!.at
    deps.scheduler.schedule(
      'execution.step',
      nowMs + Math.max(0, at - base) * 1000,
      { id: e.id, index },
      { subject: e.id },
    )
  }
  if (action.time_left_ms !== null)
    deps.scheduler.schedule(
      'execution.time-limit',
      nowMs + action.time_left_ms,
      { id: e.id },
      { subject: e.id },
    )
  setStatus(deps, e, 'RUNNING')
}

/**
 * The state a caller sees: a PENDING action whose execution no longer waits in REQUIRES_ACTION is CANCELED
 * (cancel requested, deleted, revoked, deadline), one past its expiry is EXPIRED.
 */
export function actionState(deps: Deps, a: ActionRecord): ActionStatus {
  if (a.status !== 'PENDING') return a.status
  const e = getExecution(deps.db, a.execution_id)
  if (!e || e.terminal || e.status !== 'REQUIRES_ACTION') return 'CANCELED'
  if (deps.clock.nowMs() >= a.expires_at) return 'EXPIRED'
  return 'PENDING'
}

/** The action of an execution, else 404 NOT_FOUND. */
export function actionOf(deps: Deps, executionId: string, actionId: string): ActionRecord {
  const a = getAction(deps.db, actionId)
  if (!a || a.execution_id !== executionId)
    throw new ApiError('NOT_FOUND', { message: 'No such action.' })
  return a
}

/** ERR-077, ERR-078, ACT-022: an expired action is 409 ACTION_EXPIRED; one no longer waited for, ACTION_CANCELED. */
export function assertNotEnded(deps: Deps, a: ActionRecord, allowResolved: boolean): void {
  const state = actionState(deps, a)
  if (state === 'EXPIRED')
    throw new ApiError('ACTION_EXPIRED', {
      message: 'The action passed its deadline; the execution was not resumed.',
      details: { action_id: a.id, expires_at: iso(a.expires_at) },
    })
  if (state === 'CANCELED' || (state === 'RESOLVED' && !allowResolved))
    throw new ApiError('ACTION_CANCELED', {
      message:
        state === 'RESOLVED'
          ? 'The action was already resolved; the execution no longer waits for it.'
          : 'The execution no longer waits for this action.',
      details: { action_id: a.id, status: state },
    })
}

/** ApprovalContent of an approval action (GET /v1/runs/{run_id}/actions/{action_id}). */
export function approvalContent(
  material: ApprovalMaterial,
): components['schemas']['ApprovalContent'] {
  return {
    ...material,
    content_hash: contentHash(material),
    decisions: [...DECISIONS[material.kind]],
  }
}

/** The status_url of the execution an action belongs to. */
export function executionUrl(e: ExecutionRecord): string {
  return e.kind === 'RUN' ? `/v1/runs/${e.id}` : `/v1/sessions/${e.session_id}/turns/${e.id}`
}

/**
 * An element of required_actions (Run detail) and the content of an action_required event. Assumed shape:
 * id, kind (APPROVAL | QUESTION), status PENDING, created_at, expires_at, resolve_url; an approval adds
 * approval_kind, decisions and content_url (its review content); a question adds its questions.
 */
export function requiredActionView(e: ExecutionRecord, a: ActionRecord) {
  const actionUrl =
    e.kind === 'RUN'
      ? `/v1/runs/${e.id}/actions/${a.id}`
      : `/v1/sessions/${e.session_id}/turns/${e.id}/actions/${a.id}`
  const common = {
    id: a.id,
    kind: a.kind,
    status: 'PENDING' as const,
    created_at: iso(a.created_at),
    expires_at: iso(a.expires_at),
    resolve_url: `${actionUrl}/resolve`,
  }
  if (a.kind === 'APPROVAL' && a.material)
    return {
      ...common,
      approval_kind: a.material.kind,
      decisions: [...DECISIONS[a.material.kind]],
      content_url: actionUrl,
    }
  return { ...common, questions: a.questions ?? [] }
}

/** The pending actions of an execution as required_actions elements (empty when none). */
export function requiredActions(deps: Deps, e: ExecutionRecord) {
  return pendingActions(deps.db, e.id)
    .filter((a) => actionState(deps, a) === 'PENDING')
    .map((a) => requiredActionView(e, a))
}

/** The newest pending action of an execution (for its action_required event). */
export const pendingActionOf = (deps: Deps, executionId: string): ActionRecord | undefined =>
  pendingActions(deps.db, executionId).at(-1)

/** The body resolving an approval action. */
export type ApprovalResolve = components['schemas']['ApprovalResolveInput']
/** The body answering a question action. */
export type QuestionResolve = components['schemas']['ActionResolveInput']

/**
 * Resolves an approval: ACT-017/ACT-018 the decision must be one the kind accepts (422 INVALID_INPUT),
 * ACT-019 the content_hash must be the current one (409 ACTION_CONTENT_CHANGED). APPROVE, CONFIRM and SKIP
 * resume the script; REJECT_JOB ends the Run CANCELED with code CANCELED (assumed).
 */
export function resolveApproval(
  deps: Deps,
  e: ExecutionRecord,
  a: ActionRecord,
  body: ApprovalResolve,
): void {
  if (a.kind !== 'APPROVAL' || !a.material)
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: 'This is a question action: send ActionResolveInput {answers}.',
      details: { action_id: a.id, kind: a.kind },
    })
  const kind = a.material.kind
  if (!decisionAllowed(kind, body.decision))
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `A ${kind} action accepts ${DECISIONS[kind].join(', ')}.`,
      details: { decision: body.decision, decisions: [...DECISIONS[kind]] },
    })
  const current = contentHash(a.material)
  if (body.content_hash !== current)
    throw new ApiError('ACTION_CONTENT_CHANGED', {
      message: 'The review content changed since it was read; read it again and decide again.',
      details: { action_id: a.id },
    })
  settle(deps, a, { decision: body.decision, content_hash: current, actor: body.actor })
  if (body.decision === 'REJECT_JOB')
    return finishExecution(
      deps,
      e,
      'CANCELED',
      'CANCELED',
      'The person deciding rejected the job (REJECT_JOB).',
    )
  resume(deps, e, a)
}

/** Resolves a question action: ACT-005 every question answered exactly once, with its own option ids. */
export function resolveQuestion(
  deps: Deps,
  e: ExecutionRecord,
  a: ActionRecord,
  body: QuestionResolve,
): void {
  if (a.kind !== 'QUESTION' || !a.questions)
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message:
        'This is an approval action: send ApprovalResolveInput {decision, content_hash, actor}.',
      details: { action_id: a.id, kind: a.kind },
    })
  const problems = answerProblems(a.questions, body.answers)
  if (problems.length > 0)
    throw new ApiError('INVALID_INPUT', {
      status: 422,
      message: `The answers do not fit the questions: ${problems.join('; ')}`,
      details: { problems },
    })
  settle(deps, a, { answers: body.answers })
  resume(deps, e, a)
}

function settle(deps: Deps, a: ActionRecord, resolution: Record<string, unknown>): void {
  a.status = 'RESOLVED'
  a.resolved_at = deps.clock.nowMs()
  a.resolution = resolution
  saveAction(deps.db, a)
  deps.scheduler.cancelSubject(a.execution_id, 'action.expire')
}

/**
 * Control API: the review content changes (rehearse ACTION_CONTENT_CHANGED), gets larger (rehearse
 * APPROVAL_CONTENT_TOO_LARGE) or becomes unavailable (APPROVAL_CONTENT_UNAVAILABLE). With no summary and no
 * rows given, " (revised)" is appended to the summary. Returns the new hash.
 */
export function changeApprovalContent(
  deps: Deps,
  a: ActionRecord,
  patch: { summary?: string; rows?: Record<string, unknown>[]; available?: boolean },
): string {
  if (!a.material) throw new ApiError('INVALID_INPUT', { status: 422, message: 'not an approval' })
  const material = { ...a.material }
  if (patch.summary !== undefined) material.summary = patch.summary
  if (patch.rows !== undefined) material.rows = patch.rows
  if (patch.summary === undefined && patch.rows === undefined && patch.available === undefined)
    material.summary = `${material.summary ?? ''} (revised)`.trim()
  a.material = material
  if (patch.available !== undefined) a.content_available = patch.available
  saveAction(deps.db, a)
  return contentHash(material)
}

/** Registers the action.expire timer kind. */
export function registerActionTimers(kinds: TimerKinds): void {
  kinds.register<{ id: string }>('action.expire', ({ id }, { deps }) => {
    const a = getAction(deps.db, id)
    if (!a || a.status !== 'PENDING') return
    const e = getExecution(deps.db, a.execution_id)
    if (!e || e.terminal || e.status !== 'REQUIRES_ACTION') return
    a.status = 'EXPIRED'
    saveAction(deps.db, a)
    // ACT-022: an expired action does not resume the execution; it ends EXPIRED (assumed end).
    finishExecution(
      deps,
      e,
      'EXPIRED',
      'ACTION_EXPIRED',
      'The action was not resolved before it expired.',
    )
  })
}

/** The execution listener that cancels the pending actions of an execution leaving REQUIRES_ACTION. */
export function cancelActionsOnChange(deps: Deps, ev: ExecutionEvent): void {
  if (ev.type !== 'status' || ev.execution.status === 'REQUIRES_ACTION') return
  for (const a of pendingActions(deps.db, ev.execution.id)) {
    a.status = 'CANCELED'
    saveAction(deps.db, a)
  }
}
