/**
 * Interactive action rules (Interactive action records; Approval handling rules 1-6): which decisions an
 * approval kind accepts, the content hash of review material, its size limits, how a question action must be
 * answered, and the shape of the `action` a scenario's action_required step may carry. Pure: no HTTP, no SQL.
 */
import { createHash } from 'node:crypto'
import type { components } from '../../spec/index.js'
import { filenameProblem, isAllowedPair } from './file-rules.js'
import { canonicalJson } from './idempotency.js'

type Schemas = components['schemas']

export type ApprovalKind = Schemas['ApprovalContent']['kind']
export type Decision = Schemas['ApprovalDecision']

/** ActionQuestion (Interactive action records): all four fields required. */
export type ActionQuestion = Schemas['ActionQuestion']

/** One entry of ActionResolveInput.answers. */
export type ActionAnswer = Schemas['ActionAnswer']

/** Review material of an approval: ApprovalContent without content_hash and decisions. */
export type ApprovalMaterial = Omit<Schemas['ApprovalContent'], 'content_hash' | 'decisions'>

/** What a scenario's action_required step asks for (mock/execution/scenarios.ts). */
export type ActionSpec =
  | {
      kind: 'APPROVAL'
      approval: ApprovalKind
      stage_key?: string
      summary?: string
      rows?: Record<string, unknown>[]
      results?: Record<string, unknown>[]
      /** Files the person reviews (ACT-021): stored as artifacts of the Run when the action is created. */
      review_files?: ReviewFileSpec[]
    }
  | { kind: 'QUESTION'; questions: ActionQuestion[] }

/** A review file as a scenario gives it: an allowed filename and MIME type pair, and its text content. */
export type ReviewFileSpec = { filename: string; mime_type: string; text: string }

/** At most this many review files per approval (ApprovalContent.review_files, assumed). */
export const MAX_REVIEW_FILES = 10

/** Approval handling rule 2: the decisions each approval kind accepts. */
export const DECISIONS: Readonly<Record<ApprovalKind, readonly Decision[]>> = {
  STAGE_HOLD: ['APPROVE', 'SKIP', 'REJECT_JOB'],
  RESULT_CONFIRMATION: ['CONFIRM', 'REJECT_JOB'],
}

/** ACT-017, ACT-018: whether an approval kind accepts a decision. */
export const decisionAllowed = (kind: ApprovalKind, decision: string): decision is Decision =>
  (DECISIONS[kind] as readonly string[]).includes(decision)

/** Review material is limited to 100 rows and 256 KiB (Interactive action records). */
export const MAX_REVIEW_ROWS = 100
export const MAX_REVIEW_BYTES = 256 * 1024

/** Assumed: an action without expires_after_s can be answered for one hour. */
export const DEFAULT_ACTION_EXPIRY_S = 3600

/**
 * content_hash: sha256 (64 lowercase hex) of the canonical JSON (keys sorted) of the review material, so any
 * change of what the person saw changes the hash (Approval handling rule 3).
 */
export function contentHash(material: ApprovalMaterial): string {
  return createHash('sha256').update(canonicalJson(material), 'utf8').digest('hex')
}

/** ERR-035: review material over 100 rows or 256 KiB (its JSON in UTF-8) cannot be served. */
export function reviewTooLarge(material: ApprovalMaterial): boolean {
  if ((material.rows?.length ?? 0) > MAX_REVIEW_ROWS) return true
  return Buffer.byteLength(JSON.stringify(material), 'utf8') > MAX_REVIEW_BYTES
}

/** The action a step without an `action` asks for: a stage hold for a Run, a one-choice question for a Turn. */
export function defaultActionSpec(executionKind: 'RUN' | 'TURN'): ActionSpec {
  if (executionKind === 'RUN') {
    return {
      kind: 'APPROVAL',
      approval: 'STAGE_HOLD',
      stage_key: 'review',
      summary: 'The mock holds this stage for a human decision.',
      rows: [{ item: 'mock row', value: 1 }],
    }
  }
  return {
    kind: 'QUESTION',
    questions: [
      {
        id: 'q1',
        text: 'Which option should the mock take?',
        options: [
          { id: 'a', label: 'Option A', description: null },
          { id: 'b', label: 'Option B', description: null },
        ],
        multi_select: false,
      },
    ],
  }
}

/** The review material of an approval spec. */
export function approvalMaterial(
  spec: Extract<ActionSpec, { kind: 'APPROVAL' }>,
): ApprovalMaterial {
  const m: ApprovalMaterial = { kind: spec.approval }
  if (spec.stage_key !== undefined) m.stage_key = spec.stage_key
  if (spec.summary !== undefined) m.summary = spec.summary
  if (spec.rows !== undefined) m.rows = spec.rows
  if (spec.results !== undefined) m.results = spec.results
  return m
}

/**
 * ACT-005 and the option rules: every question answered exactly once, no unknown question, option ids of that
 * question only, each at most once, one option unless multi_select, and something answered (an option or a
 * text). Returns the problems (empty when the answers fit). Assumed beyond ACT-005: the option and
 * multi_select rules and "an answer must carry an option or a text".
 */
export function answerProblems(questions: ActionQuestion[], answers: ActionAnswer[]): string[] {
  const problems: string[] = []
  const byId = new Map(questions.map((q) => [q.id, q]))
  const seen = new Set<string>()
  answers.forEach((a, i) => {
    const where = `answers[${i}]`
    const q = byId.get(a.question_id)
    if (!q) {
      problems.push(`${where}.question_id "${a.question_id}" is not a question of this action`)
      return
    }
    if (seen.has(a.question_id))
      problems.push(`${where}.question_id "${a.question_id}" is answered more than once`)
    seen.add(a.question_id)
    const options = a.option_ids ?? []
    const known = new Set(q.options.map((o) => o.id))
    const picked = new Set<string>()
    for (const id of options) {
      if (!known.has(id))
        problems.push(`${where}.option_ids: "${id}" is not an option of question "${q.id}"`)
      if (picked.has(id)) problems.push(`${where}.option_ids: "${id}" is listed twice`)
      picked.add(id)
    }
    if (!q.multi_select && options.length > 1)
      problems.push(`${where}.option_ids: question "${q.id}" takes one option (multi_select false)`)
    if (options.length === 0 && (a.text ?? null) === null)
      problems.push(`${where}: give option_ids or a text`)
  })
  for (const q of questions)
    if (!seen.has(q.id)) problems.push(`question "${q.id}" is not answered`)
  return problems
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const ID = /^.{1,16}$/su

/** Checks an approval's review_files: 1 to 10 files, each an allowed filename and MIME pair with a text. */
function reviewFileProblems(files: unknown, where: string): string[] {
  if (!Array.isArray(files) || files.length < 1 || files.length > MAX_REVIEW_FILES)
    return [`${where} must be a list of 1 to ${MAX_REVIEW_FILES} files`]
  const problems: string[] = []
  files.forEach((f: unknown, i) => {
    const at = `${where}[${i}]`
    if (!isObject(f)) return problems.push(`${at} must be {filename, mime_type, text}`)
    for (const k of Object.keys(f))
      if (!['filename', 'mime_type', 'text'].includes(k))
        problems.push(`${at} has an unknown field "${k}"`)
    if (typeof f.text !== 'string') problems.push(`${at}.text must be a string`)
    if (typeof f.filename !== 'string' || filenameProblem(f.filename))
      return problems.push(`${at}.filename must be a valid filename`)
    if (typeof f.mime_type !== 'string' || !isAllowedPair(f.filename, f.mime_type))
      problems.push(`${at}.mime_type must be an allowed type for "${f.filename}"`)
  })
  return problems
}

/** Checks a step's `action` (scenario data); returns the problems, each naming its place. */
export function actionSpecProblems(spec: unknown, where: string): string[] {
  if (!isObject(spec)) return [`${where} must be an object {kind: APPROVAL | QUESTION, ...}`]
  const problems: string[] = []
  const unknownFields = (allowed: string[]) => {
    for (const k of Object.keys(spec))
      if (!allowed.includes(k)) problems.push(`${where} has an unknown field "${k}"`)
  }
  const objectList = (v: unknown, field: string) => {
    if (v !== undefined && !(Array.isArray(v) && v.every(isObject)))
      problems.push(`${where}.${field} must be a list of objects`)
  }
  if (spec.kind === 'APPROVAL') {
    unknownFields(['kind', 'approval', 'stage_key', 'summary', 'rows', 'results', 'review_files'])
    if (spec.review_files !== undefined)
      problems.push(...reviewFileProblems(spec.review_files, `${where}.review_files`))
    if (spec.approval !== 'STAGE_HOLD' && spec.approval !== 'RESULT_CONFIRMATION')
      problems.push(`${where}.approval must be STAGE_HOLD or RESULT_CONFIRMATION`)
    for (const f of ['stage_key', 'summary'])
      if (spec[f] !== undefined && typeof spec[f] !== 'string')
        problems.push(`${where}.${f} must be a string`)
    objectList(spec.rows, 'rows')
    objectList(spec.results, 'results')
    return problems
  }
  if (spec.kind === 'QUESTION') {
    unknownFields(['kind', 'questions'])
    const qs = spec.questions
    // ActionResolveInput takes 1 to 4 answers, one per question: a question action has 1 to 4 questions.
    if (!Array.isArray(qs) || qs.length < 1 || qs.length > 4) {
      problems.push(`${where}.questions must be a list of 1 to 4 questions`)
      return problems
    }
    const ids = new Set<string>()
    qs.forEach((q: unknown, i) => {
      const at = `${where}.questions[${i}]`
      if (!isObject(q)) return problems.push(`${at} must be an ActionQuestion object`)
      if (typeof q.id !== 'string' || !ID.test(q.id))
        problems.push(`${at}.id must be a string of 1-16 characters`)
      else if (ids.has(q.id)) problems.push(`${at}.id "${q.id}" is used twice`)
      else ids.add(q.id)
      if (typeof q.text !== 'string') problems.push(`${at}.text must be a string`)
      if (typeof q.multi_select !== 'boolean') problems.push(`${at}.multi_select must be a boolean`)
      if (!Array.isArray(q.options)) return problems.push(`${at}.options must be a list`)
      const optionIds = new Set<string>()
      q.options.forEach((o: unknown, j) => {
        const ot = `${at}.options[${j}]`
        if (!isObject(o)) return problems.push(`${ot} must be {id, label, description}`)
        if (typeof o.id !== 'string' || !ID.test(o.id))
          problems.push(`${ot}.id must be a string of 1-16 characters`)
        else if (optionIds.has(o.id)) problems.push(`${ot}.id "${o.id}" is used twice`)
        else optionIds.add(o.id)
        if (typeof o.label !== 'string') problems.push(`${ot}.label must be a string`)
        if (o.description !== null && typeof o.description !== 'string')
          problems.push(`${ot}.description must be a string or null`)
      })
      for (const k of Object.keys(q))
        if (!['id', 'text', 'options', 'multi_select'].includes(k))
          problems.push(`${at} has an unknown field "${k}"`)
    })
    return problems
  }
  return [`${where}.kind must be APPROVAL or QUESTION`]
}
