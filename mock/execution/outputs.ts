/**
 * The output builder: what a script's output step produces, after the public result rules (Output items;
 * States and transitions, result-rule rows; Limits > Sizes and counts, Time limits; Data handling). The
 * executor calls produceOutput() for each output step and startPreparation() when a script succeeds.
 *
 * Order of the rules for one output (the first broken one decides):
 *   FILE: OUTPUT_PATH_DENIED, INVALID_FILENAME, UNSUPPORTED_FILE_TYPE, OUTPUT_CONTAINS_CREDENTIALS (name, content),
 *         OUTPUT_LIMIT_EXCEEDED (10 MiB), OUTPUT_SCHEMA_MISMATCH (contract type);
 *   JSON: OUTPUT_LIMIT_EXCEEDED (depth 16, 10,000 elements, 10 MiB), OUTPUT_CONTAINS_CREDENTIALS,
 *         OUTPUT_SCHEMA_MISMATCH (contract type, then the contract entry's JSON Schema);
 *   TEXT: OUTPUT_CONTAINS_CREDENTIALS, then contact details are masked, OUTPUT_SCHEMA_MISMATCH (contract type);
 *   URL:  OUTPUT_CONTAINS_CREDENTIALS, OUTPUT_URL_INVALID, OUTPUT_SCHEMA_MISMATCH (contract type).
 * Then the execution-wide rules when a file is stored: the 11th FILE result (OUTPUT_LIMIT_EXCEEDED) and 100 MiB
 * of files in total (OUTPUT_LIMIT_EXCEEDED).
 *
 * A Turn fails at once with the broken rule's code. A Run keeps the item with `error` set (no value, no file)
 * and its end rules (runEnd) decide: FAILED with the code, or PARTIALLY_SUCCEEDED for an optional output when
 * the publication allows partial results. Execution-wide rules end a Run at once too.
 */
import type { ErrorCode } from '../../spec/index.js'
import type { Deps } from '../deps.js'
import type { TimerKinds } from '../clock/timer-kinds.js'
import { sha256Hex } from '../domain/files.js'
import { jsonShape } from '../domain/json-limits.js'
import { fittingCount } from '../domain/list-limits.js'
import {
  contractBreak,
  fileCountBreak,
  filenameBreak,
  fileSizeBreak,
  jsonBytes,
  jsonIsInline,
  jsonLimitBreak,
  pathBreak,
  PREPARATION_MAX_S,
  producedFileTypeBreak,
  storageBreak,
  textIsInline,
  type ContractRule,
  type RuleBreak,
} from '../domain/output-rules.js'
import { runFileExpiresAt } from '../domain/retention.js'
import { containsCredential, maskPublicText, urlResultProblem } from '../domain/result-rules.js'
import { getDeployment } from '../store/deployments.js'
import { executionFileBytes } from '../store/execution-files.js'
import {
  getExecution,
  listOutputRows,
  listOutputs,
  type ExecutionRecord,
  type ExecutionStatus,
  type OutputItem,
} from '../store/executions.js'
import {
  createArtifact,
  getArtifactFile,
  type NewArtifact,
  type StoredFile,
} from '../store/files.js'
import type { OutputSpec, ScenarioStep } from './scenarios.js'

/** What one output step comes to. */
export type Produced =
  /** Publish this item (it may carry `error` on a Run: a failed output the end rules judge). */
  | { item: OutputItem }
  /** End the execution FAILED with this code now. */
  | { fail: RuleBreak }
  /** A FILE whose preparation finishes after the execution ends: published by the preparation timer. */
  | { held: true }

const CREDENTIALS: RuleBreak = {
  code: 'OUTPUT_CONTAINS_CREDENTIALS',
  message: 'A result contained a credential pattern.',
}

/** The content a spec produces: `repeat` copies of its text / content / data (to script large results). */
export const textOf = (spec: { text: string; repeat?: number }): string =>
  spec.repeat ? spec.text.repeat(spec.repeat) : spec.text
const contentOf = (spec: { content: string; repeat?: number }): string =>
  spec.repeat ? spec.content.repeat(spec.repeat) : spec.content
const dataOf = (spec: { data: unknown; repeat?: number }): unknown =>
  spec.repeat ? Array.from({ length: spec.repeat }, () => spec.data) : spec.data

/** The result contract the execution is judged by: the Run's frozen one, else its Deployment's. */
function contractOf(deps: Deps, e: ExecutionRecord): readonly ContractRule[] {
  if (e.run) return e.run.outputs
  return (e.deployment_id && getDeployment(deps.db, e.deployment_id)?.outputs) || []
}

/** A file to store, checked against the execution-wide rules first. */
type FileToStore = {
  filename: string
  mimeType: string
  bytes: Uint8Array
  countsAsFile: boolean
  /** A file still being prepared: ready at this time (ARTIFACT_NOT_READY before). */
  readyAtMs?: number
}

/** Stores a result file of the execution, or the execution-wide rule its storing breaks. */
function storeFile(deps: Deps, e: ExecutionRecord, f: FileToStore): StoredFile | RuleBreak {
  if (f.countsAsFile) {
    const files = listOutputs(deps.db, e.id, -1, 1000).items.filter(
      (o) => o.type === 'FILE' && !o.error,
    ).length
    const tooMany = fileCountBreak(files)
    if (tooMany) return tooMany
  }
  const full = storageBreak(executionFileBytes(deps.db, e.id), f.bytes.byteLength)
  if (full) return full
  return storeExecutionArtifact(deps, e, {
    filename: f.filename,
    mimeType: f.mimeType,
    bytes: f.bytes,
    readyAtMs: f.readyAtMs,
  })
}

/**
 * Stores a file of the execution as an artifact of its Project, Deployment and Session (result files, and an
 * approval's review files): the one place an execution's file gets its ids and its retention.
 */
export function storeExecutionArtifact(
  deps: Deps,
  e: ExecutionRecord,
  f: Pick<NewArtifact, 'filename' | 'mimeType' | 'bytes' | 'readyAtMs' | 'reviewActionId'>,
): StoredFile {
  return createArtifact(deps.db, {
    ...f,
    artifactId: deps.ids.uuid(),
    fileId: deps.ids.uuid(),
    projectId: e.project_id,
    deploymentId: e.deployment_id,
    sessionId: e.session_id,
    executionId: e.id,
    nowMs: deps.clock.nowMs(),
    // RET-009: a Run's files are kept until its deadline and the end of its content retention.
    expiresAtMs: e.run ? runFileExpiresAt(e.run.deadline_at, e.run.retention_days) : undefined,
  })
}

const bytesOf = (spec: { content: string; repeat?: number }): Uint8Array =>
  new Uint8Array(Buffer.from(contentOf(spec), 'utf8'))

/** The item rules of a FILE result, in order; the first broken one. */
function fileItemBreak(
  contract: readonly ContractRule[],
  spec: Extract<OutputSpec, { type: 'FILE' }>,
  checkType: boolean,
): RuleBreak | undefined {
  const content = contentOf(spec)
  const bytes = bytesOf(spec)
  return (
    pathBreak(spec.path) ??
    filenameBreak(spec.filename) ??
    producedFileTypeBreak(spec.filename, spec.mime_type, bytes) ??
    (containsCredential(spec.filename) || containsCredential(content) ? CREDENTIALS : undefined) ??
    fileSizeBreak(bytes.byteLength) ??
    contractBreak(contract, { key: spec.key ?? 'result', type: 'FILE' }, checkType)
  )
}

const isBreak = (v: StoredFile | RuleBreak): v is RuleBreak => 'code' in v && !('id' in v)

/**
 * The output of one step: the item to publish, the code that fails the execution, or a held FILE whose
 * preparation ends after the execution (`prepared` is set when startPreparation publishes it: its file is
 * ready at `prepared.readyAtMs`).
 */
export function produceOutput(
  deps: Deps,
  e: ExecutionRecord,
  spec: OutputSpec,
  prepared: false | { readyAtMs: number } = false,
): Produced {
  const key = spec.key ?? 'result'
  const base: ItemBase = {
    id: deps.ids.uuid(),
    key,
    type: spec.type,
    visibility: spec.visibility ?? 'FINAL',
    availability: 'READY' as const,
    error: spec.error_code
      ? { code: spec.error_code, message: spec.error_code, retryable: false }
      : null,
  }
  // Role-bound outputs (`contract`) fit any target, so their type is compared only when the script asks.
  const checkType = spec.contract === undefined || spec.check_contract_type === true
  const contract = contractOf(deps, e)
  // A Turn fails at once; a Run keeps a failed item for its end rules (runEnd).
  const broken = (b: RuleBreak): Produced =>
    e.run ? { item: failedItem(deps, base, spec, b) } : { fail: b }
  switch (spec.type) {
    case 'TEXT': {
      const raw = textOf(spec)
      if (containsCredential(raw)) return broken(CREDENTIALS)
      const c = contractBreak(contract, { key, type: 'TEXT' }, checkType)
      if (c) return broken(c)
      // DATA-002: contact details in the free text of a result are masked (credentials failed it above).
      const text = maskPublicText(raw)
      if (textIsInline(text))
        return { item: Object.assign({}, base, { type: spec.type, item_id: base.id, text }) }
      // SIZE-004: larger is delivered as a file (itself at most 10 MiB); the item keeps type TEXT.
      const textBytes = new Uint8Array(Buffer.from(text, 'utf8'))
      const size = fileSizeBreak(textBytes.byteLength)
      if (size) return broken(size)
      const stored = storeFile(deps, e, {
        filename: `${key}.txt`,
        mimeType: 'text/plain',
        bytes: textBytes,
        countsAsFile: false,
      })
      if (isBreak(stored)) return { fail: stored }
      return {
        item: Object.assign({}, base, { type: spec.type, item_id: base.id }, fileRef(stored)),
      }
    }
    case 'JSON': {
      const data = dataOf(spec)
      const shape = jsonShape(data)
      const bytes = jsonBytes(data)
      const over = jsonLimitBreak(shape, bytes)
      if (over) return broken(over)
      if (containsCredential(data)) return broken(CREDENTIALS)
      const c = contractBreak(contract, { key, type: 'JSON', data }, checkType)
      if (c) return broken(c)
      const schema_ref = spec.schema_ref ?? 'mock:result'
      if (jsonIsInline(shape, bytes)) {
        return {
          item: {
            ...base,
            type: spec.type,
            data,
            schema_ref,
            mime_type: 'application/json',
            size_bytes: bytes,
            artifact_id: null,
          },
        }
      }
      // SIZE-005: over 64 KiB or 100 array elements: delivered as a file (no inline data).
      const stored = storeFile(deps, e, {
        filename: `${key}.json`,
        mimeType: 'application/json',
        bytes: new Uint8Array(Buffer.from(JSON.stringify(data), 'utf8')),
        countsAsFile: false,
      })
      if (isBreak(stored)) return { fail: stored }
      // The stored file is application/json (JsonOutput.mime_type), as given to storeFile above.
      return {
        item: {
          ...base,
          type: spec.type,
          schema_ref,
          ...fileRef(stored),
          mime_type: 'application/json',
        },
      }
    }
    case 'URL': {
      if (containsCredential(spec.url)) return broken(CREDENTIALS)
      if (urlResultProblem(spec.url))
        return broken({
          code: 'OUTPUT_URL_INVALID',
          message: 'The URL result is not a public HTTPS address without login details or tokens.',
        })
      const c = contractBreak(contract, { key, type: 'URL' }, checkType)
      if (c) return broken(c)
      return {
        item: Object.assign({}, base, {
          type: spec.type,
          url: spec.url,
          access: spec.access ?? 'PUBLIC',
        }),
      }
    }
    case 'FILE': {
      const b = fileItemBreak(contract, spec, checkType)
      if (b) return broken(b)
      // TIME-002: a file still being prepared is published when its preparation ends (startPreparation).
      if (!prepared && (spec.prepare_seconds !== undefined || spec.prepare_fails))
        return { held: true }
      const stored = storeFile(deps, e, {
        filename: spec.filename,
        mimeType: spec.mime_type,
        bytes: bytesOf(spec),
        countsAsFile: true,
        readyAtMs: prepared ? prepared.readyAtMs : undefined,
      })
      // The 11th file and the 100 MiB total are execution-wide: they end a Run at once as well.
      if (isBreak(stored)) return { fail: stored }
      return {
        item: {
          ...base,
          type: spec.type,
          ...fileRef(stored),
          filename: stored.filename,
          sha256: stored.sha256,
        },
      }
    }
  }
}

const fileRef = (f: StoredFile) => ({
  artifact_id: f.artifact_id!,
  mime_type: f.mime_type,
  size_bytes: f.size_bytes,
})

const EMPTY_SHA256 = sha256Hex(new Uint8Array())

/** The fields every output item starts with, in this order; the fields of its type follow. */
type ItemBase = Pick<OutputItem, 'id' | 'key' | 'type' | 'visibility' | 'availability'> & {
  error: NonNullable<OutputItem['error']> | null
}

/**
 * A Run's failed output item: the common fields with `error` set and no value, no text and no stored file.
 * A FILE item keeps the fields its schema requires: artifact_id names no artifact (reads answer 404),
 * filename is empty, size_bytes 0 and sha256 that of no bytes.
 */
function failedItem(deps: Deps, base: ItemBase, spec: OutputSpec, b: RuleBreak): OutputItem {
  const item = {
    ...base,
    error: { code: b.code, message: b.message, retryable: false },
  }
  switch (spec.type) {
    case 'TEXT':
      return Object.assign({}, item, { type: spec.type, item_id: base.id })
    case 'JSON':
      return {
        ...item,
        type: spec.type,
        schema_ref: spec.schema_ref ?? 'mock:result',
        mime_type: null,
        size_bytes: null,
        artifact_id: null,
      }
    case 'FILE':
      return {
        ...item,
        type: spec.type,
        artifact_id: deps.ids.uuid(),
        filename: '',
        mime_type: spec.mime_type,
        size_bytes: 0,
        sha256: EMPTY_SHA256,
      }
    case 'URL':
      return Object.assign({}, item, { type: spec.type, access: 'UNKNOWN' as const })
  }
}

/** The FILE output steps before `index` whose preparation ends after the execution. */
function preparedSteps(e: ExecutionRecord, index: number): OutputSpec[] {
  return e.steps
    .slice(0, index)
    .filter(
      (s): s is Extract<ScenarioStep, { step: 'output' }> =>
        s.step === 'output' &&
        s.output.type === 'FILE' &&
        (s.output.prepare_seconds !== undefined || s.output.prepare_fails === true),
    )
    .map((s) => s.output)
}

/** How the end of an execution waits for its result files (TIME-002, STATE-016). */
export type Preparation =
  | { wait: false }
  | { wait: true; fail: { code: 'ARTIFACT_PREPARATION_FAILED'; message: string } }
  | { wait: true; timeoutAfterS: number }
  | { wait: true; readyAfterS: number }

/**
 * When a script succeeds (step `index`), whether held FILE results still need preparing: a step with
 * prepare_fails fails the execution now (ARTIFACT_PREPARATION_FAILED); the longest prepare_seconds decides
 * when they are ready, and one over 300 s ends the execution 300 s later with ARTIFACT_PREPARATION_TIMEOUT.
 * Held files that broke a result rule already ended the execution (or, on a Run, became failed items).
 */
export function preparationAtEnd(e: ExecutionRecord, index: number): Preparation {
  const held = preparedSteps(e, index)
  if (held.length === 0) return { wait: false }
  if (held.some((s) => s.type === 'FILE' && s.prepare_fails))
    return {
      wait: true,
      fail: {
        code: 'ARTIFACT_PREPARATION_FAILED',
        message: 'A result file was not ready when the execution ended.',
      },
    }
  const longest = Math.max(...held.map((s) => (s.type === 'FILE' ? (s.prepare_seconds ?? 0) : 0)))
  if (longest > PREPARATION_MAX_S) return { wait: true, timeoutAfterS: PREPARATION_MAX_S }
  return { wait: true, readyAfterS: longest }
}

/**
 * The held FILE results before step `index`, published while they are prepared (ready at readyAtMs): each
 * one's item or the code that fails it.
 */
export const preparedOutputs = (
  deps: Deps,
  e: ExecutionRecord,
  index: number,
  readyAtMs: number,
): Produced[] =>
  preparedSteps(e, index)
    // A held file that broke a rule at its step already failed the execution or became a failed item.
    .filter(
      (spec) =>
        spec.type === 'FILE' &&
        !fileItemBreak(
          contractOf(deps, e),
          spec,
          spec.contract === undefined || spec.check_contract_type === true,
        ),
    )
    .map((spec) => produceOutput(deps, e, spec, { readyAtMs }))

/**
 * OUT-004: an output item whose file retention has passed shows availability EXPIRED with error.code
 * ARTIFACT_EXPIRED, computed at read time from the artifact's expires_at (reading never extends it).
 */
export function presentOutputs(deps: Deps, items: readonly OutputItem[]): OutputItem[] {
  const nowMs = deps.clock.nowMs()
  return items.map((item) => {
    const artifactId =
      'artifact_id' in item && typeof item.artifact_id === 'string' ? item.artifact_id : undefined
    if (!artifactId || item.error) return item
    const file = getArtifactFile(deps.db, artifactId)
    if (!file || nowMs < file.expires_at) return item
    return {
      ...item,
      availability: 'EXPIRED',
      error: {
        code: 'ARTIFACT_EXPIRED',
        message: 'The result file is past its retention.',
        retryable: false,
      },
    }
  })
}

/** What the preparation timers need of the executor (passed in, so this module does not import it). */
export type EndHooks = {
  /** Ends the execution with a terminal status and code (the executor's finishExecution). */
  finish: (
    deps: Deps,
    e: ExecutionRecord,
    status: ExecutionStatus,
    code?: ErrorCode,
    message?: string,
  ) => void
  /** Stores and announces one output item. */
  publish: (deps: Deps, e: ExecutionRecord, item: OutputItem) => void
  /** Ends the execution on its own terms (the end rules of a succeed step). */
  end: (deps: Deps, e: ExecutionRecord) => void
}

/**
 * At a succeed step (`index`): true when the end waits for result file preparation (TIME-002, STATE-016).
 * The execution stays RUNNING meanwhile (its execution time limit no longer applies: the work has ended;
 * a Run's deadline still does); `execution.files-ready` publishes the files and ends it,
 * `execution.files-timeout` fails it with ARTIFACT_PREPARATION_TIMEOUT 300 s after the end.
 */
export function startPreparation(
  deps: Deps,
  e: ExecutionRecord,
  index: number,
  hooks: EndHooks,
): boolean {
  const p = preparationAtEnd(e, index)
  if (!p.wait) return false
  if ('fail' in p) {
    hooks.finish(deps, e, 'FAILED', p.fail.code, p.fail.message)
    return true
  }
  deps.scheduler.cancelSubject(e.id, 'execution.time-limit')
  const nowMs = deps.clock.nowMs()
  if ('timeoutAfterS' in p)
    deps.scheduler.schedule(
      'execution.files-timeout',
      nowMs + p.timeoutAfterS * 1000,
      { id: e.id },
      { subject: e.id },
    )
  else {
    // ERR-087 (assumed timing): the items are published now and their files answer ARTIFACT_NOT_READY
    // until the preparation ends; then the execution ends (SUCCEEDED at the earliest).
    const readyAtMs = nowMs + p.readyAfterS * 1000
    for (const out of preparedOutputs(deps, e, index, readyAtMs)) {
      if ('fail' in out) {
        hooks.finish(deps, e, 'FAILED', out.fail.code, out.fail.message)
        return true
      }
      if ('item' in out) hooks.publish(deps, e, out.item)
    }
    deps.scheduler.schedule(
      'execution.files-ready',
      readyAtMs,
      { id: e.id, index },
      { subject: e.id },
    )
  }
  return true
}

/** Registers the preparation timers (called by the executor's registerExecutionTimers). */
export function registerOutputTimers(kinds: TimerKinds, hooks: EndHooks): void {
  const live = (deps: Deps, id: string) => {
    const e = getExecution(deps.db, id)
    // STATE-009: a Run in CANCEL_REQUESTED does no more work.
    if (!e || e.terminal || (e.kind === 'RUN' && e.status === 'CANCEL_REQUESTED')) return undefined
    return e
  }
  kinds.register<{ id: string; index: number }>('execution.files-ready', ({ id }, { deps }) => {
    const e = live(deps, id)
    // The files were published when their preparation started (startPreparation); now they are ready.
    if (e) hooks.end(deps, e)
  })
  kinds.register<{ id: string }>('execution.files-timeout', ({ id }, { deps }) => {
    const e = live(deps, id)
    if (e)
      hooks.finish(
        deps,
        e,
        'FAILED',
        'ARTIFACT_PREPARATION_TIMEOUT',
        `Result file preparation passed its deadline (${PREPARATION_MAX_S} s after the execution ended).`,
      )
  })
}

/**
 * SIZE-014, SES-022, RUN-017: a page of an execution's published outputs after `afterPosition`: at most `limit`
 * items, ending before the response passes 256 KiB (`overheadBytes`: the rest of the body). `last`: the
 * position of the page's last item (the next page's cursor); `more`: whether outputs remain after it.
 */
export function outputsPage(
  deps: Deps,
  executionId: string,
  afterPosition: number,
  limit: number,
  /** The page's bytes without its items, or how to measure them (fittingCount measures only if needed). */
  overheadBytes: number | (() => number),
): { items: OutputItem[]; last: number; more: boolean } {
  const rows = listOutputRows(deps.db, executionId, afterPosition, limit + 1)
  const candidates = presentOutputs(
    deps,
    rows.slice(0, limit).map((r) => r.item),
  )
  // An item shown as stored has the size its stored JSON has (an expired file's item is measured again).
  const n = fittingCount(candidates, overheadBytes, (item, i) =>
    item === rows[i]!.item ? rows[i]!.bytes : undefined,
  )
  return {
    items: candidates.slice(0, n),
    last: n > 0 ? rows[n - 1]!.position : afterPosition,
    more: rows.length > n,
  }
}
