/**
 * Organization works and their preparations (Usage and works; Errors REVISION_CONFLICT .. INVALID_REQUEST) as
 * pure rules: the work description's rules (INVALID_SPEC), the questions a preparation asks, and the
 * preparation state machine as transitions (state, event) -> next state or an error code. The document shows
 * neither the states nor the shapes; everything here is the mock's assumption, kept small:
 *
 *   PREPARING --questions_ready (5 s after creation)--> WAITING_FOR_ANSWERS
 *   WAITING_FOR_ANSWERS --answer (the last open question closed)--> WAITING_FOR_CONFIRMATION (scope question)
 *   WAITING_FOR_CONFIRMATION --answer {decision: CONFIRM}--> READY
 *   WAITING_FOR_CONFIRMATION --answer {decision: REJECT}--> FAILED (reason_codes [SCOPE_REJECTED])
 *   any non-terminal --deadline_passed (24 h after creation)--> EXPIRED (reason_codes [DEADLINE_PASSED])
 *   any non-terminal --package_changed--> same status, new candidate digest
 *
 * READY, FAILED and EXPIRED are terminal. Every accepted change adds 1 to the revision. Answers in PREPARING or
 * a terminal status are INVALID_TRANSITION. Time events are applied lazily by observe(state, now), so a read at
 * any virtual time sees the same state a timer would have produced, without timers.
 */
import { containsCredential } from './result-rules.js'

/** A preparation asks its questions this long after creation (assumed). */
export const QUESTIONS_READY_MS = 5_000
/** A preparation not finished this long after creation has passed its deadline (assumed). */
export const PREPARATION_DEADLINE_MS = 24 * 60 * 60 * 1000
/** What one preparation costs (assumed): reserved at creation, settled when the questions are ready. */
export const PREPARATION_SU = 0.1
/** The id of the scope confirmation question. */
export const SCOPE_QUESTION_ID = 'scope'

export type PreparationStatus =
  'PREPARING' | 'WAITING_FOR_ANSWERS' | 'WAITING_FOR_CONFIRMATION' | 'READY' | 'FAILED' | 'EXPIRED'

export const TERMINAL_PREPARATION: ReadonlySet<PreparationStatus> = new Set([
  'READY',
  'FAILED',
  'EXPIRED',
])

export type QuestionKind = 'TEXT' | 'CHOICE' | 'SCOPE_CONFIRMATION'
export type QuestionOption = { id: string; label: string; description: string | null }
export type Question = {
  id: string
  kind: QuestionKind
  text: string
  options: QuestionOption[]
  multi_select: boolean
  open: boolean
}

export type Actor = { subject: string }

/** One answer as the caller sends it (PreparationAnswer; fields assumed). Exactly one value field. */
export type ParsedAnswer = {
  question_id: string
  text?: string
  option_ids?: string[]
  decision?: 'CONFIRM' | 'REJECT'
  package_digest?: string
}

export type RecordedAnswer = ParsedAnswer & { actor: Actor | null; answered_at: number }

export type PreparationState = {
  status: PreparationStatus
  revision: number
  /** The questions planned at creation; asked (open) from WAITING_FOR_ANSWERS on. */
  questions: Question[]
  answers: RecordedAnswer[]
  /** Digest of the candidate setup a person confirms (64 lowercase hex). */
  package_digest: string
  reason_codes: string[]
  created_at: number
  updated_at: number
  ready_at: number
  deadline_at: number
}

export type PreparationErrorCode =
  | 'REVISION_CONFLICT'
  | 'INVALID_TRANSITION'
  | 'QUESTION_NOT_FOUND'
  | 'PACKAGE_CHANGED'
  | 'INVALID_REQUEST'
  | 'ACTION_NOT_RESOLVABLE_BY_CALLER'

export type PreparationError = {
  code: PreparationErrorCode
  message: string
  details: Record<string, unknown>
}

export type PreparationEvent =
  | { type: 'questions_ready'; at: number }
  | { type: 'deadline_passed'; at: number }
  | { type: 'package_changed'; at: number; digest: string }
  | {
      type: 'answer'
      at: number
      expectedRevision: number
      /** The answers array as received (PreparationAnswer items are open objects). */
      answers: readonly unknown[]
      actor: Actor | null
      /** The key holds works:approve. */
      canApprove: boolean
    }

export type Transition =
  { ok: true; state: PreparationState } | { ok: false; error: PreparationError }

const fail = (
  code: PreparationErrorCode,
  message: string,
  details: Record<string, unknown> = {},
): Transition => ({ ok: false, error: { code, message, details } })

const invalidRequest = (reason: string, message: string, details: Record<string, unknown> = {}) =>
  fail('INVALID_REQUEST', message, { reason, ...details })

/** A new preparation of a work (revision 1, PREPARING). */
export function newPreparation(
  questions: Question[],
  packageDigest: string,
  nowMs: number,
): PreparationState {
  return {
    status: 'PREPARING',
    revision: 1,
    questions: questions.map((q) => ({ ...q, open: false })),
    answers: [],
    package_digest: packageDigest,
    reason_codes: [],
    created_at: nowMs,
    updated_at: nowMs,
    ready_at: nowMs + QUESTIONS_READY_MS,
    deadline_at: nowMs + PREPARATION_DEADLINE_MS,
  }
}

export const isTerminal = (s: PreparationState): boolean => TERMINAL_PREPARATION.has(s.status)

/** The state at nowMs: the time events due by then (questions ready, deadline) applied in time order. */
export function observe(state: PreparationState, nowMs: number): PreparationState {
  let s = state
  if (s.status === 'PREPARING' && nowMs >= s.ready_at) {
    s = applyOk(s, { type: 'questions_ready', at: s.ready_at })
  }
  if (!isTerminal(s) && nowMs >= s.deadline_at) {
    s = applyOk(s, { type: 'deadline_passed', at: s.deadline_at })
  }
  return s
}

function applyOk(s: PreparationState, e: PreparationEvent): PreparationState {
  const t = transition(s, e)
  if (!t.ok) throw new Error(`time event ${e.type} refused: ${t.error.code}`)
  return t.state
}

/** The preparation state machine: the next state, or the error code the request is answered with. */
export function transition(s: PreparationState, e: PreparationEvent): Transition {
  const bump = (patch: Partial<PreparationState>): Transition => ({
    ok: true,
    state: { ...s, ...patch, revision: s.revision + 1, updated_at: e.at },
  })
  switch (e.type) {
    case 'questions_ready':
      if (s.status !== 'PREPARING') return fail('INVALID_TRANSITION', 'Questions are asked once.')
      return bump({
        status: 'WAITING_FOR_ANSWERS',
        questions: s.questions.map((q) => ({ ...q, open: true })),
      })
    case 'deadline_passed':
      if (isTerminal(s)) return fail('INVALID_TRANSITION', 'The preparation has ended.')
      return bump({
        status: 'EXPIRED',
        questions: s.questions.map((q) => ({ ...q, open: false })),
        reason_codes: ['DEADLINE_PASSED'],
      })
    case 'package_changed':
      if (isTerminal(s))
        return fail('INVALID_TRANSITION', 'The preparation has ended.', { status: s.status })
      return bump({ package_digest: e.digest })
    case 'answer':
      return answer(s, e)
  }
}

const ANSWER_FIELDS = new Set(['question_id', 'text', 'option_ids', 'decision', 'package_digest'])
const ID = /^[A-Za-z0-9_-]{1,64}$/
const DIGEST = /^[0-9a-f]{64}$/

/** The shape rules of one answer (INVALID_REQUEST with details.reason and details.index). */
export function parseAnswer(raw: unknown, index: number): ParsedAnswer | PreparationError {
  const err = (reason: string, message: string): PreparationError => ({
    code: 'INVALID_REQUEST',
    message,
    details: { reason, index },
  })
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return err('ANSWER_MALFORMED', 'Each answer is an object.')
  const a = raw as Record<string, unknown>
  const unknown = Object.keys(a).find((k) => !ANSWER_FIELDS.has(k))
  if (unknown !== undefined)
    return err('ANSWER_MALFORMED', `Answer field ${unknown} is not one the mock knows.`)
  if (typeof a.question_id !== 'string' || !ID.test(a.question_id))
    return err('ANSWER_MALFORMED', 'question_id is a string of 1 to 64 letters, digits, _ or -.')
  const values = ['text', 'option_ids', 'decision'].filter((k) => a[k] !== undefined)
  if (values.length !== 1)
    return err(
      'ANSWER_VALUE_INVALID',
      'An answer carries exactly one of text, option_ids, decision.',
    )
  const out: ParsedAnswer = { question_id: a.question_id }
  if (a.text !== undefined) {
    if (typeof a.text !== 'string' || a.text.trim() === '' || a.text.length > 4000)
      return err('ANSWER_VALUE_INVALID', 'text is 1 to 4000 characters, not blank.')
    out.text = a.text
  }
  if (a.option_ids !== undefined) {
    const ids = a.option_ids
    if (
      !Array.isArray(ids) ||
      ids.length < 1 ||
      ids.length > 10 ||
      !ids.every((i) => typeof i === 'string' && ID.test(i)) ||
      new Set(ids).size !== ids.length
    )
      return err('ANSWER_VALUE_INVALID', 'option_ids is 1 to 10 distinct option ids.')
    out.option_ids = ids as string[]
  }
  if (a.decision !== undefined) {
    if (a.decision !== 'CONFIRM' && a.decision !== 'REJECT')
      return err('ANSWER_VALUE_INVALID', 'decision is CONFIRM or REJECT.')
    if (typeof a.package_digest !== 'string' || !DIGEST.test(a.package_digest))
      return err(
        'PACKAGE_DIGEST_REQUIRED',
        'A scope confirmation carries the package_digest the person reviewed (64 lowercase hex).',
      )
    out.decision = a.decision
    out.package_digest = a.package_digest
  } else if (a.package_digest !== undefined) {
    return err('ANSWER_VALUE_INVALID', 'package_digest belongs to a scope confirmation only.')
  }
  return out
}

const isError = (x: ParsedAnswer | PreparationError): x is PreparationError => 'code' in x

/**
 * An answers request. Order of checks (assumed; the document is silent): shape (INVALID_REQUEST) and the scope
 * confirmation's permission (ACTION_NOT_RESOLVABLE_BY_CALLER) first, as they do not depend on the
 * preparation; then its state (INVALID_TRANSITION) and revision (REVISION_CONFLICT); then each answer in order
 * (QUESTION_NOT_FOUND, INVALID_REQUEST, PACKAGE_CHANGED). WORK-004: any refusal leaves the state unchanged.
 */
function answer(s: PreparationState, e: Extract<PreparationEvent, { type: 'answer' }>): Transition {
  const parsed: ParsedAnswer[] = []
  for (const [i, raw] of e.answers.entries()) {
    const p = parseAnswer(raw, i)
    if (isError(p)) return { ok: false, error: p }
    parsed.push(p)
  }
  const confirmation = parsed.find((a) => a.decision !== undefined)
  if (confirmation) {
    // WORK-005: a scope confirmation is sent alone, with actor, and needs works:approve.
    if (parsed.length !== 1)
      return invalidRequest('SCOPE_CONFIRMATION_NOT_ALONE', 'A scope confirmation is sent alone.')
    if (e.actor === null)
      return invalidRequest('ACTOR_REQUIRED', 'A scope confirmation names the confirming actor.')
    if (!e.canApprove)
      return fail(
        'ACTION_NOT_RESOLVABLE_BY_CALLER',
        'A scope confirmation needs the works:approve scope.',
        { required_scope: 'works:approve' },
      )
  }
  if (s.status === 'PREPARING' || isTerminal(s))
    return fail(
      'INVALID_TRANSITION',
      s.status === 'PREPARING'
        ? 'The preparation has not asked its questions yet.'
        : s.status === 'EXPIRED'
          ? 'The preparation passed its deadline.'
          : 'The preparation has ended.',
      { status: s.status },
    )
  if (e.expectedRevision !== s.revision)
    return fail('REVISION_CONFLICT', 'The preparation changed since it was read.', {
      current_revision: s.revision,
    })
  const questions = s.questions.map((q) => ({ ...q }))
  const recorded: RecordedAnswer[] = []
  for (const [index, a] of parsed.entries()) {
    const q = questions.find((x) => x.id === a.question_id && x.open)
    if (!q)
      return fail('QUESTION_NOT_FOUND', `Question ${a.question_id} is not open.`, {
        question_id: a.question_id,
        index,
      })
    const expected = q.kind === 'TEXT' ? 'text' : q.kind === 'CHOICE' ? 'option_ids' : 'decision'
    if (a[expected] === undefined)
      return invalidRequest(
        'ANSWER_KIND_MISMATCH',
        `Question ${q.id} (${q.kind}) is answered with ${expected}.`,
        { index, question_id: q.id },
      )
    if (a.option_ids) {
      const known = new Set(q.options.map((o) => o.id))
      if (!a.option_ids.every((o) => known.has(o)) || (!q.multi_select && a.option_ids.length > 1))
        return invalidRequest(
          'OPTION_INVALID',
          `Question ${q.id} takes ${q.multi_select ? 'some' : 'one'} of its options.`,
          { index, question_id: q.id },
        )
    }
    if (a.package_digest !== undefined && a.package_digest !== s.package_digest)
      return fail('PACKAGE_CHANGED', 'The setup the person reviewed is no longer the candidate.', {
        question_id: q.id,
      })
    q.open = false
    recorded.push({ ...a, actor: e.actor, answered_at: e.at })
  }
  const answers = [...s.answers, ...recorded]
  const bump = (patch: Partial<PreparationState>): Transition => ({
    ok: true,
    state: { ...s, answers, ...patch, revision: s.revision + 1, updated_at: e.at },
  })
  if (confirmation) {
    return confirmation.decision === 'CONFIRM'
      ? bump({ status: 'READY', questions })
      : bump({ status: 'FAILED', questions, reason_codes: ['SCOPE_REJECTED'] })
  }
  if (s.status === 'WAITING_FOR_ANSWERS' && questions.every((q) => !q.open)) {
    return bump({
      status: 'WAITING_FOR_CONFIRMATION',
      questions: [...questions, scopeQuestion()],
    })
  }
  return bump({ questions })
}

/** The scope confirmation question, opened once every other question is answered. */
export const scopeQuestion = (): Question => ({
  id: SCOPE_QUESTION_ID,
  kind: 'SCOPE_CONFIRMATION',
  text: 'Confirm the scope of the prepared setup (package_digest) with the person responsible.',
  options: [],
  multi_select: false,
  open: true,
})

/** What a preparation costs at nowMs (observed state): reserved while PREPARING, settled after. */
export function preparationUsage(s: PreparationState): { settled_su: number; reserved_su: number } {
  return s.status === 'PREPARING'
    ? { settled_su: 0, reserved_su: PREPARATION_SU }
    : { settled_su: PREPARATION_SU, reserved_su: 0 }
}

// ---- Work descriptions -------------------------------------------------------------------------------

/** POST /v1/works body as the mock accepts it (WorkCreateInput is not shown; assumed). */
export type WorkInput = {
  title: string
  description: string
  checklist?: string[]
  expected_revision?: number
}

export type WorkInputError = {
  code: 'INVALID_INPUT' | 'INVALID_SPEC'
  message: string
  details: Record<string, unknown>
}

const WORK_FIELDS = new Set(['title', 'description', 'checklist', 'expected_revision'])
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

/**
 * The work description's rules. Wrong JSON types and undeclared fields are INVALID_INPUT (as every /v1 body);
 * values that break a work rule are INVALID_SPEC with details.reason: TITLE_INVALID (1-200 characters, no
 * control characters, not blank), DESCRIPTION_INVALID (1-4000 characters, not blank),
 * DESCRIPTION_CONTAINS_CREDENTIALS, CHECKLIST_INVALID (1-20 distinct non-blank items of at most 200).
 */
export function parseWorkInput(body: unknown): WorkInput | WorkInputError {
  const input = (message: string, details: Record<string, unknown> = {}): WorkInputError => ({
    code: 'INVALID_INPUT',
    message,
    details,
  })
  const spec = (reason: string, message: string): WorkInputError => ({
    code: 'INVALID_SPEC',
    message,
    details: { reason },
  })
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return input('The body is a JSON object.')
  const b = body as Record<string, unknown>
  const unknown = Object.keys(b).find((k) => !WORK_FIELDS.has(k))
  if (unknown !== undefined) return input(`undeclared field ${unknown}`, { field: unknown })
  if (typeof b.title !== 'string') return input('title is a string.', { field: 'title' })
  if (typeof b.description !== 'string')
    return input('description is a string.', { field: 'description' })
  if (
    b.checklist !== undefined &&
    (!Array.isArray(b.checklist) || !b.checklist.every((i) => typeof i === 'string'))
  )
    return input('checklist is an array of strings.', { field: 'checklist' })
  if (
    b.expected_revision !== undefined &&
    (typeof b.expected_revision !== 'number' ||
      !Number.isInteger(b.expected_revision) ||
      b.expected_revision < 1)
  )
    return input('expected_revision is an integer >= 1.', { field: 'expected_revision' })
  const title = b.title
  if (title.trim() === '' || title.length > 200 || CONTROL.test(title))
    return spec(
      'TITLE_INVALID',
      'The title is 1 to 200 characters, not blank, no control characters.',
    )
  if (b.description.trim() === '' || b.description.length > 4000)
    return spec('DESCRIPTION_INVALID', 'The description is 1 to 4000 characters, not blank.')
  if (containsCredential([title, b.description, b.checklist ?? []]))
    return spec(
      'DESCRIPTION_CONTAINS_CREDENTIALS',
      'A work description must not contain credentials.',
    )
  const checklist = b.checklist as string[] | undefined
  if (
    checklist !== undefined &&
    (checklist.length < 1 ||
      checklist.length > 20 ||
      checklist.some((i) => i.trim() === '' || i.length > 200) ||
      new Set(checklist.map(workKey)).size !== checklist.length)
  )
    return spec('CHECKLIST_INVALID', 'The checklist has 1 to 20 distinct, non-blank items.')
  return {
    title,
    description: b.description,
    ...(checklist ? { checklist } : {}),
    ...(b.expected_revision !== undefined ? { expected_revision: b.expected_revision } : {}),
  }
}

/** "Same work" (PREPARATION_IN_PROGRESS): the same title in the Project, ignoring case and spacing. */
export const workKey = (title: string): string => title.trim().replace(/\s+/g, ' ').toLowerCase()

/** The questions a preparation asks: one TEXT question per checklist item, else a reviewer and a schedule. */
export function plannedQuestions(work: WorkInput): Question[] {
  const text = (id: string, t: string): Question => ({
    id,
    kind: 'TEXT',
    text: t,
    options: [],
    multi_select: false,
    open: false,
  })
  if (work.checklist)
    return work.checklist.map((item, i) => text(`q${i + 1}`, `How should "${item}" be done?`))
  return [
    text('q1', `Who reviews the result of "${work.title}"?`),
    {
      id: 'q2',
      kind: 'CHOICE',
      text: `How often should "${work.title}" run?`,
      options: ['once', 'daily', 'weekly', 'monthly'].map((o) => ({
        id: o,
        label: o[0]!.toUpperCase() + o.slice(1),
        description: null,
      })),
      multi_select: false,
      open: false,
    },
  ]
}

/** The work's status from its latest preparation (assumed): PREPARING, READY or NOT_READY. */
export function workStatus(latest: PreparationState): 'PREPARING' | 'READY' | 'NOT_READY' {
  if (!isTerminal(latest)) return 'PREPARING'
  return latest.status === 'READY' ? 'READY' : 'NOT_READY'
}
