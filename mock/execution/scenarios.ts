/**
 * Built-in scenarios of MOCK-CONTRACT as data: scripts on virtual time that an accepted execution follows.
 * No engine here: the executor (execution/executor.ts) turns each step into a timer and applies the document's
 * rules.
 */
import { ERROR_CATALOG, type ErrorCode } from '../../spec/index.js'
import { actionSpecProblems, type ActionSpec } from '../domain/actions.js'
import { STEP_END_STATUSES } from '../domain/run-steps.js'

/** What a step's output produces. `contract` binds it to the target's result contract instead of a fixed key. */
export type OutputSpec = {
  /** Output key; default: the key picked by `contract`, else "result". */
  key?: string
  /**
   * "required" / "optional": use the key of the first required / optional output of the Deployment's or
   * Workflow's result contract (so one scenario fits every fixture).
   */
  contract?: 'required' | 'optional'
  /** INTERMEDIATE, PARTIAL or FINAL (default FINAL). */
  visibility?: 'INTERMEDIATE' | 'PARTIAL' | 'FINAL'
  /** This output item fails with an execution error code (the `partial` scenario). */
  error_code?: ErrorCode
  /**
   * Compare this role-bound (`contract`) output's type with its contract entry's type (OUTPUT_SCHEMA_MISMATCH
   * when they differ). Outputs with an explicit `key` are always compared; role-bound ones are not unless
   * this is true, so the generic scenarios fit every fixture's contract.
   */
  check_contract_type?: boolean
} &
  /** `repeat`: the text is `repeat` copies of `text` (to script results over 64 KiB without writing them). */
  (
    | { type: 'TEXT'; text: string; repeat?: number }
    /** `repeat`: the data is an array of `repeat` copies of `data`. */
    | { type: 'JSON'; data: unknown; schema_ref?: string; repeat?: number }
    | {
        type: 'FILE'
        filename: string
        mime_type: string
        /** UTF-8 content; `repeat` copies of it when `repeat` is given. */
        content: string
        repeat?: number
        /** Where the script took the file from; outside `attachments/` -> OUTPUT_PATH_DENIED. */
        path?: string
        /** The file is ready this many seconds after the execution ends (over 300: ARTIFACT_PREPARATION_TIMEOUT). */
        prepare_seconds?: number
        /** Preparing the file fails: the execution ends FAILED with ARTIFACT_PREPARATION_FAILED. */
        prepare_fails?: boolean
      }
    | { type: 'URL'; url: string; access?: 'PUBLIC' | 'AUTHENTICATED' | 'UNKNOWN' }
  )

/**
 * The step vocabulary. `at` is seconds after the execution is accepted; steps run in list order.
 * - running: QUEUED -> RUNNING (sets started_at).
 * - output: produces one output item (kept back and published with the terminal status for a Run).
 * - tool: the execution calls a tool: a TOOL_CALL item and a `tool.started` event carrying only the tool's
 *   `name` and a call id (`call_id`, else a fresh one). `arguments` and `result` stand for what the tool was
 *   given and gave back: the mock keeps them internal, so a test can show they never leave (EVT-002).
 * - step_start, step_end (Runs only): the boundaries of one step of a Run. `step_start` opens the step `id`;
 *   with `queued_s` the step first waits that long in the queue (nothing else may happen meanwhile): it may
 *   wait its queue_seconds, never past the whole-Run queue total of 3,600 s, else the Run ends EXPIRED with
 *   QUEUE_TIMEOUT. Once it runs, the Run's execution_seconds applies to it alone (EXECUTION_TIMEOUT).
 *   `step_end` ends the open step (`status` SUCCEEDED by default, or FAILED): a STEP_OUTCOME item and
 *   run.step.completed; a step started again with the id of a FAILED one is its retry. progress.total is the
 *   number of unique step ids; progress.completed counts those that succeeded. A step still open when the
 *   Run ends ends with it. Without these markers a Run is one script: each `spend` marks a step done.
 * - spend: consumes `su` SU (reserved, settled at the end). Spending past the execution's max_su fails it
 *   with BUDGET_EXCEEDED (the executor's budget rule, not the script, ends it). su 101 is past every max_su.
 * - action_required: a human answer or approval becomes necessary. In the private beta the facility is not
 *   provided, so the executor fails the execution with ACTION_REQUIRED_UNSUPPORTED. A Project with the
 *   facility (fixture `interactive_actions`, or POST /_mock/projects/{id}/interactive-actions) waits in
 *   REQUIRES_ACTION for `action` (default: a stage hold for a Run, a one-choice question for a Turn; an
 *   approval's `review_files` become Run artifacts read only with actions:approve) until it
 *   is resolved or `expires_after_s` (default 3600) passes; the later steps keep their spacing from the
 *   resolution (mock/execution/actions.ts).
 * - succeed: the execution ends on its own terms; the executor still applies the result rules (a missing
 *   required output -> OUTPUT_MISSING, a credential pattern -> OUTPUT_CONTAINS_CREDENTIALS, a failed optional
 *   output with allows_partial -> PARTIALLY_SUCCEEDED) before settling usage FINAL.
 * - fail: the execution ends with an execution error code: FAILED, or the `status` given (CANCELED or
 *   EXPIRED, for the codes the document ends that way: CANCELED, SESSION_DELETED, AUTHORIZATION_REVOKED,
 *   WORKFLOW_UNAVAILABLE; QUEUE_TIMEOUT, RUN_DEADLINE_EXCEEDED).
 * A script without a terminal step (succeed / fail) runs until a time limit or a cancel ends it (`slow`).
 */
export type ScenarioStep =
  | { at: number; step: 'running' }
  | { at: number; step: 'output'; output: OutputSpec }
  | { at: number; step: 'spend'; su: number }
  | { at: number; step: 'step_start'; id: string; queued_s?: number }
  | { at: number; step: 'step_end'; status?: (typeof STEP_END_STATUSES)[number] }
  | {
      at: number
      step: 'tool'
      name: string
      call_id?: string
      /** Internal only: never in an event, item, notification or answer. */
      arguments?: unknown
      /** Internal only: never in an event, item, notification or answer. */
      result?: unknown
    }
  | { at: number; step: 'action_required'; action?: ActionSpec; expires_after_s?: number }
  | { at: number; step: 'succeed' }
  | {
      at: number
      step: 'fail'
      code: ErrorCode
      message?: string
      /** The terminal status (default FAILED). */
      status?: FailStatus
    }

/** The terminal statuses a `fail` step may end in. */
export const FAIL_STATUSES = ['FAILED', 'CANCELED', 'EXPIRED'] as const
export type FailStatus = (typeof FAIL_STATUSES)[number]

export type StepName = ScenarioStep['step']
export const STEP_NAMES: readonly StepName[] = [
  'running',
  'output',
  'spend',
  'tool',
  'step_start',
  'step_end',
  'action_required',
  'succeed',
  'fail',
]
const TERMINAL: ReadonlySet<StepName> = new Set(['succeed', 'fail'])

/** Which executions a scenario may be queued for. */
export type ScenarioTarget = 'deployment' | 'workflow'

export type ScenarioDefinition = {
  name: string
  description: string
  applies_to: ScenarioTarget[]
  steps: ScenarioStep[]
}

/** The default for an execution with nothing queued. */
export const DEFAULT_SCENARIO = 'succeed'

const BOTH: ScenarioTarget[] = ['deployment', 'workflow']
const SMALL_SU = 0.25

/** A script that runs, produces the given outputs at 4 and succeeds at 5 (the result-rule scenarios). */
const producing = (...outputs: OutputSpec[]): ScenarioStep[] => [
  { at: 1, step: 'running' },
  { at: 4, step: 'spend', su: SMALL_SU },
  ...outputs.map((output): ScenarioStep => ({ at: 4, step: 'output', output })),
  { at: 5, step: 'succeed' },
]

/** A JSON value nested `depth` containers deep: {"level":{"level":...{}}}. */
const nested = (depth: number): unknown => {
  let v: unknown = {}
  for (let i = 1; i < depth; i++) v = { level: v }
  return v
}

const MiB = 1024 * 1024

/**
 * Scenarios to rehearse each public result rule (Output items; Limits > Sizes and counts, Time limits;
 * Errors > OUTPUT_*; Data handling). Beyond MOCK-CONTRACT; each description says what happens. Outputs are
 * bound to the target's first required result (`contract: 'required'`) so each fits every fixture.
 */
export const RESULT_RULE_SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: 'large-text',
    description:
      'a FINAL TEXT output of 70,000 bytes (over 64 KiB) at 4: delivered as a file (the TEXT item has artifact_id, mime_type text/plain and size_bytes, no inline text); SUCCEEDED at 5',
    applies_to: BOTH,
    steps: producing({ contract: 'required', type: 'TEXT', text: 'x', repeat: 70_000 }),
  },
  {
    name: 'large-json',
    description:
      'a JSON output with 150 array elements (over 100) at 4: delivered as a file (artifact_id, mime_type application/json, size_bytes; no inline data); SUCCEEDED at 5',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'JSON',
      data: { row: 1 },
      repeat: 150,
      schema_ref: 'mock:large-json',
    }),
  },
  {
    name: 'json-over-limit',
    description:
      'a JSON output with 10,001 array elements in total at 4: FAILED with OUTPUT_LIMIT_EXCEEDED (never truncated)',
    applies_to: BOTH,
    steps: producing({ contract: 'required', type: 'JSON', data: 0, repeat: 10_001 }),
  },
  {
    name: 'deep-json',
    description: 'a JSON output nested 17 deep (over 16) at 4: FAILED with OUTPUT_LIMIT_EXCEEDED',
    applies_to: BOTH,
    steps: producing({ contract: 'required', type: 'JSON', data: nested(17) }),
  },
  {
    name: 'file-too-large',
    description:
      'a FILE output of 10 MiB + 1 byte at 4: FAILED with OUTPUT_LIMIT_EXCEEDED (no file is stored)',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'big.txt',
      mime_type: 'text/plain',
      content: 'a',
      repeat: 10 * MiB + 1,
    }),
  },
  {
    name: 'too-many-files',
    description:
      'eleven small FILE outputs at 4 (over 10 per execution): FAILED with OUTPUT_LIMIT_EXCEEDED at the 11th',
    applies_to: BOTH,
    steps: producing(
      ...Array.from({ length: 11 }, (_, i): OutputSpec => ({
        key: `file-${i + 1}`,
        type: 'FILE',
        filename: `part-${i + 1}.txt`,
        mime_type: 'text/plain',
        content: `Part ${i + 1}.\n`,
      })),
    ),
  },
  {
    name: 'storage-limit',
    description:
      'ten FILE outputs of 10 MiB and a 70,000-byte TEXT delivered as a file at 4: the files of the execution would pass 100 MiB, FAILED with OUTPUT_LIMIT_EXCEEDED',
    applies_to: BOTH,
    steps: producing(
      ...Array.from({ length: 10 }, (_, i): OutputSpec => ({
        key: `chunk-${i + 1}`,
        type: 'FILE',
        filename: `chunk-${i + 1}.txt`,
        mime_type: 'text/plain',
        content: 'a',
        repeat: 10 * MiB,
      })),
      { key: 'tail', type: 'TEXT', text: 'x', repeat: 70_000 },
    ),
  },
  {
    name: 'bad-url',
    description:
      'a URL output to an internal address (http://169.254.169.254/latest/meta-data) at 4: FAILED with OUTPUT_URL_INVALID',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'URL',
      url: 'http://169.254.169.254/latest/meta-data',
    }),
  },
  {
    name: 'denied-path',
    description:
      'a FILE output taken from ../config/settings.txt (outside the Session attachments folder) at 4: FAILED with OUTPUT_PATH_DENIED',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'settings.txt',
      mime_type: 'text/plain',
      content: 'mode=dark\n',
      path: '../config/settings.txt',
    }),
  },
  {
    name: 'bad-filename',
    description:
      'a FILE output named "reports/q3.txt" (a slash) at 4: FAILED with INVALID_FILENAME',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'reports/q3.txt',
      mime_type: 'text/plain',
      content: 'Q3.\n',
    }),
  },
  {
    name: 'bad-file-type',
    description:
      'a FILE output "tool.exe" (application/octet-stream, not an allowed type) at 4: FAILED with UNSUPPORTED_FILE_TYPE',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'tool.exe',
      mime_type: 'application/octet-stream',
      content: 'MZ',
    }),
  },
  {
    name: 'schema-mismatch',
    description:
      "a JSON output for the target's first required result, whose contract type is not JSON (or whose JSON Schema it breaks), at 4: FAILED with OUTPUT_SCHEMA_MISMATCH",
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      check_contract_type: true,
      type: 'JSON',
      data: { unexpected: true },
      schema_ref: 'mock:schema-mismatch',
    }),
  },
  {
    name: 'prepared-file',
    description:
      'a FILE output whose preparation takes 60 s: the work ends at 5 and the FILE item is listed, its artifact answers 409 ARTIFACT_NOT_READY until the file is ready and the execution SUCCEEDED at 65 (RUNNING until then)',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'report.txt',
      mime_type: 'text/plain',
      content: 'Prepared report.\n',
      prepare_seconds: 60,
    }),
  },
  {
    name: 'slow-file',
    description:
      'a FILE output whose preparation would take 400 s: the work ends at 5; FAILED with ARTIFACT_PREPARATION_TIMEOUT at 305 (300 s after the end)',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'report.txt',
      mime_type: 'text/plain',
      content: 'Slow report.\n',
      prepare_seconds: 400,
    }),
  },
  {
    name: 'broken-file',
    description:
      'a FILE output whose preparation fails: FAILED with ARTIFACT_PREPARATION_FAILED at 5 when the work ends',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'FILE',
      filename: 'report.txt',
      mime_type: 'text/plain',
      content: 'Broken report.\n',
      prepare_fails: true,
    }),
  },
  {
    name: 'contact-details',
    description:
      'a FINAL TEXT output holding an e-mail address and a phone number at 4: SUCCEEDED at 5, both masked in the output and in public events',
    applies_to: BOTH,
    steps: producing({
      contract: 'required',
      type: 'TEXT',
      text: 'Call Jane on +1 415 555 0100 or write to jane.doe@example.com.',
    }),
  },
  {
    name: 'large-outputs',
    description:
      'the required TEXT output and five more TEXT outputs of 58,800 characters each (inline, under 64 KiB) at 4: SUCCEEDED at 5; the outputs together pass 256 KiB, so their list is split into pages',
    applies_to: BOTH,
    steps: producing(
      { contract: 'required', type: 'TEXT', text: 'The summary.' },
      ...Array.from({ length: 5 }, (_, i): OutputSpec => ({
        key: `part-${i + 1}`,
        type: 'TEXT',
        text: 'Lorem ipsum dolor sit amet. ',
        repeat: 2_100,
      })),
    ),
  },
  {
    name: 'fifty-outputs',
    description:
      'the required TEXT output and 49 more small TEXT outputs at 4 (exactly one default page of 50): SUCCEEDED at 5',
    applies_to: BOTH,
    steps: producing(
      { contract: 'required', type: 'TEXT', text: 'The summary.' },
      ...Array.from({ length: 49 }, (_, i): OutputSpec => ({
        key: `note-${i + 1}`,
        type: 'TEXT',
        text: `Note ${i + 1}.`,
      })),
    ),
  },
  {
    name: 'partial-bad-url',
    description:
      '(Runs) the required output and an optional URL output to an internal address: PARTIALLY_SUCCEEDED when partial results are allowed, OUTPUT_URL_INVALID on that item (else FAILED with it)',
    applies_to: ['workflow'],
    steps: producing(
      { contract: 'required', type: 'TEXT', text: 'The required part is done.' },
      { contract: 'optional', type: 'URL', url: 'http://10.0.0.7/report' },
    ),
  },
]

/**
 * A scripted end with a code of the document's "next step after a failed execution" table, for the codes no
 * other scenario or control call produces on its own: RUNNING at 1 (unless `started` is false), the end at 3.
 */
const ending = (
  name: string,
  code: ErrorCode,
  description: string,
  opts: { status?: FailStatus; started?: boolean; applies_to?: ScenarioTarget[] } = {},
): ScenarioDefinition => ({
  name,
  description,
  applies_to: opts.applies_to ?? BOTH,
  steps: [
    ...(opts.started === false ? [] : [{ at: 1, step: 'running' } as const]),
    ...(opts.started === false ? [] : [{ at: 2, step: 'spend', su: SMALL_SU } as const]),
    {
      at: 3,
      step: 'fail',
      code,
      ...(opts.status && opts.status !== 'FAILED' ? { status: opts.status } : {}),
    },
  ],
})

/** Item 2 of issue 11: every code of the next-step table has a scenario (README "Rehearsal recipes"). */
export const NEXT_STEP_SCENARIOS: ScenarioDefinition[] = [
  ending(
    'queue-timeout',
    'QUEUE_TIMEOUT',
    'never starts; EXPIRED with QUEUE_TIMEOUT at 3, as if its queue time had passed (the rule itself: limits.queue_seconds)',
    { status: 'EXPIRED', started: false },
  ),
  ending(
    'recovery-exhausted',
    'RECOVERY_EXHAUSTED',
    'RUNNING at 1, FAILED with RECOVERY_EXHAUSTED at 3 (several recovery attempts failed)',
  ),
  ending(
    'usage-pending',
    'USAGE_PENDING',
    'RUNNING at 1, FAILED with USAGE_PENDING at 3 (earlier usage could not be confirmed settled)',
  ),
  ending(
    'sandbox-unavailable',
    'SESSION_SANDBOX_UNAVAILABLE',
    'the execution environment is not prepared in time: never RUNNING, FAILED with SESSION_SANDBOX_UNAVAILABLE at 3 (retryable false in the detail)',
    { started: false },
  ),
  ending(
    'execution-timeout',
    'EXECUTION_TIMEOUT',
    'RUNNING at 1, FAILED with EXECUTION_TIMEOUT at 3, as if execution_seconds had passed (the rule itself: slow with limits.execution_seconds)',
  ),
  ending(
    'run-deadline',
    'RUN_DEADLINE_EXCEEDED',
    '(Runs) RUNNING at 1, EXPIRED with RUN_DEADLINE_EXCEEDED at 3, as if run_seconds had passed (the rule itself: slow with limits.run_seconds)',
    { status: 'EXPIRED', applies_to: ['workflow'] },
  ),
  ending(
    'insufficient-su',
    'INSUFFICIENT_SU',
    'RUNNING at 1, FAILED with INSUFFICIENT_SU at 3 (the balance ran out while running)',
  ),
  ending(
    'capability-denied',
    'CAPABILITY_DENIED',
    'RUNNING at 1, FAILED with CAPABILITY_DENIED at 3 (a tool not allowed at publication was called)',
  ),
  ending(
    'resources-not-ready',
    'SESSION_RESOURCES_NOT_READY',
    'RUNNING at 1, FAILED with SESSION_RESOURCES_NOT_READY at 3 (an allowed tool not yet supported at this stage)',
  ),
  ending(
    'workflow-stopped',
    'WORKFLOW_UNAVAILABLE',
    '(Runs) RUNNING at 1, CANCELED with WORKFLOW_UNAVAILABLE at 3, as if the workflow had been stopped (the rule itself: POST /_mock/workflows/{id}/stop)',
    { status: 'CANCELED', applies_to: ['workflow'] },
  ),
  ending(
    'authorization-revoked',
    'AUTHORIZATION_REVOKED',
    'RUNNING at 1, CANCELED with AUTHORIZATION_REVOKED at 3, as if a connection used had become unusable (the key stays valid; revoking it: POST /_mock/keys/{key}/revoke)',
    { status: 'CANCELED' },
  ),
  ending(
    'context-mismatch',
    'RUNTIME_CONTEXT_MISMATCH',
    'RUNNING at 1, FAILED with RUNTIME_CONTEXT_MISMATCH at 3 (the Session cannot run it: run in a new Session)',
  ),
  ending(
    'external-effect-unknown',
    'EXTERNAL_EFFECT_UNKNOWN',
    'RUNNING at 1, FAILED with EXTERNAL_EFFECT_UNKNOWN at 3 (a write to an external system is unconfirmed; never rerun automatically)',
  ),
  ending(
    'canceled',
    'CANCELED',
    'RUNNING at 1, CANCELED with CANCELED at 3, as if a cancel request had stopped it',
    { status: 'CANCELED' },
  ),
  ending(
    'session-deleted',
    'SESSION_DELETED',
    '(Turns) RUNNING at 1, CANCELED with SESSION_DELETED at 3, as if its Session had been deleted (the Session stays readable; a real DELETE blocks reads)',
    { status: 'CANCELED', applies_to: ['deployment'] },
  ),
]

/**
 * Scenarios that show the public progress of the work (Events; Item envelope and page): tool calls (TOOL_CALL
 * items, tool.started) and, for Runs, step boundaries (STEP_OUTCOME, run.step.completed, progress, per-step
 * time limits, the whole-Run queue total).
 */
export const PROGRESS_SCENARIOS: ScenarioDefinition[] = [
  {
    name: 'tool-call',
    description:
      'RUNNING at 1; tool calls web_search at 2 and read_file at 3 (a TOOL_CALL item and a tool.started event each, with the tool name and call id only: never the arguments or results); a FINAL TEXT output at 4; SUCCEEDED at 5 with a USAGE item',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      {
        at: 2,
        step: 'tool',
        name: 'web_search',
        arguments: { query: 'quarterly revenue of ACME' },
        result: { hits: ['internal search result'] },
      },
      {
        at: 3,
        step: 'tool',
        name: 'read_file',
        arguments: { path: 'attachments/notes.txt' },
        result: 'raw file content, internal',
      },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'Revenue grew 4% in the quarter.' },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'multi-step',
    description:
      '(Runs) three steps of about 30 minutes each, 1.5 hours in all, each within execution_seconds: collect (2-1802, a web_search tool call at 3); analyze (queued 60 s from 1803, fails at 1900 and is retried 1901-3700); write (3701-5500, the required TEXT output at 5500). Each step end is a STEP_OUTCOME and run.step.completed; progress 3 of 3 (the retry counts once); SUCCEEDED at 5501',
    applies_to: ['workflow'],
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'step_start', id: 'collect' },
      { at: 3, step: 'tool', name: 'web_search' },
      { at: 1802, step: 'spend', su: SMALL_SU },
      { at: 1802, step: 'step_end' },
      { at: 1803, step: 'step_start', id: 'analyze', queued_s: 60 },
      { at: 1900, step: 'step_end', status: 'FAILED' },
      { at: 1901, step: 'step_start', id: 'analyze' },
      { at: 3700, step: 'spend', su: SMALL_SU },
      { at: 3700, step: 'step_end' },
      { at: 3701, step: 'step_start', id: 'write' },
      { at: 5500, step: 'spend', su: SMALL_SU },
      {
        at: 5500,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'The brief, in three steps.' },
      },
      { at: 5500, step: 'step_end' },
      { at: 5501, step: 'succeed' },
    ],
  },
  {
    name: 'queue-total',
    description:
      '(Runs) seven steps, each waiting 550 s queued before it runs (within queue_seconds 600): after six the Run has waited 3,301 s in all, so the seventh may wait only the 299 s left of the whole-Run queue total of 3,600 s; EXPIRED with QUEUE_TIMEOUT at 3613, progress 6 of 7',
    applies_to: ['workflow'],
    steps: [
      { at: 1, step: 'running' },
      ...Array.from({ length: 7 }, (_, i): ScenarioStep[] => [
        { at: 2 + 552 * i, step: 'step_start', id: `part-${i + 1}`, queued_s: 550 },
        { at: 553 + 552 * i, step: 'step_end' },
      ]).flat(),
      {
        at: 3866,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'Never reached.' },
      },
      { at: 3866, step: 'succeed' },
    ],
  },
]

/** The built-in scenarios of MOCK-CONTRACT, by name. */
export const BUILTIN_SCENARIOS: readonly ScenarioDefinition[] = [
  {
    name: 'succeed',
    description:
      'RUNNING at 1, a FINAL TEXT output at 4, SUCCEEDED at 5, usage FINAL with a small positive total_su',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'Done: the mock finished the task.' },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'slow',
    description: 'RUNNING at 1, then works until a time limit or cancel ends it',
    applies_to: BOTH,
    steps: [{ at: 1, step: 'running' }],
  },
  {
    name: 'fail',
    description: 'RUNNING at 1, FAILED with EXECUTION_FAILED at 3',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: SMALL_SU },
      { at: 3, step: 'fail', code: 'EXECUTION_FAILED' },
    ],
  },
  {
    name: 'json-output',
    description: 'as succeed, with a JSON output',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'required',
          type: 'JSON',
          data: { status: 'ok', items: [1, 2, 3] },
          schema_ref: 'mock:json-output',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'file-output',
    description:
      'as succeed, with a FILE output (a small text file) whose artifact can be downloaded',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'required',
          type: 'FILE',
          filename: 'report.txt',
          mime_type: 'text/plain',
          content: 'Mock report.\n',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'url-output',
    description: 'as succeed, with a URL output (public HTTPS address)',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'required',
          type: 'URL',
          url: 'https://example.com/reports/42',
          access: 'PUBLIC',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'needs-action',
    description: 'RUNNING at 1, FAILED with ACTION_REQUIRED_UNSUPPORTED at 2',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: SMALL_SU },
      { at: 2, step: 'action_required' },
    ],
  },
  {
    name: 'needs-approval',
    description:
      '(Runs) RUNNING at 1; at 2 a STAGE_HOLD approval with a review file (invoices.csv), at 4 a RESULT_CONFIRMATION of the produced result, SUCCEEDED 1 s after it is confirmed; without the interactive-action facility FAILED with ACTION_REQUIRED_UNSUPPORTED at 2',
    applies_to: ['workflow'],
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: SMALL_SU },
      {
        at: 2,
        step: 'action_required',
        action: {
          kind: 'APPROVAL',
          approval: 'STAGE_HOLD',
          stage_key: 'send_invoices',
          summary: 'Send 2 invoices to customers.',
          rows: [
            { customer: 'ACME', amount: 1200 },
            { customer: 'Globex', amount: 800 },
          ],
          review_files: [
            {
              filename: 'invoices.csv',
              mime_type: 'text/csv',
              text: 'customer,amount\nACME,1200\nGlobex,800\n',
            },
          ],
        },
      },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'Invoices sent: 2.' },
      },
      {
        at: 4,
        step: 'action_required',
        action: {
          kind: 'APPROVAL',
          approval: 'RESULT_CONFIRMATION',
          summary: 'Confirm the result: 2 invoices sent.',
          results: [{ key: 'summary', text: 'Invoices sent: 2.' }],
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'needs-answer',
    description:
      'RUNNING at 1; at 2 a question action (q1: one of two options, q2: any of three options or a text), SUCCEEDED 3 s after it is answered; without the interactive-action facility FAILED with ACTION_REQUIRED_UNSUPPORTED at 2',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: SMALL_SU },
      {
        at: 2,
        step: 'action_required',
        action: {
          kind: 'QUESTION',
          questions: [
            {
              id: 'q1',
              text: 'Which price list applies?',
              options: [
                { id: 'eur', label: 'EUR price list', description: null },
                { id: 'usd', label: 'USD price list', description: 'For US customers' },
              ],
              multi_select: false,
            },
            {
              id: 'q2',
              text: 'Which regions should the brief cover?',
              options: [
                { id: 'emea', label: 'EMEA', description: null },
                { id: 'apac', label: 'APAC', description: null },
                { id: 'amer', label: 'Americas', description: null },
              ],
              multi_select: true,
            },
          ],
        },
      },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'Done with the answers given.' },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'credential-leak',
    description:
      'produces a result holding a credential pattern; FAILED with OUTPUT_CONTAINS_CREDENTIALS',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 3, step: 'spend', su: SMALL_SU },
      {
        at: 3,
        step: 'output',
        output: {
          contract: 'required',
          type: 'TEXT',
          text: 'Use this key: AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        },
      },
      { at: 4, step: 'succeed' },
    ],
  },
  {
    name: 'over-budget',
    description: "spends past the execution's max_su; FAILED with BUDGET_EXCEEDED",
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 2, step: 'spend', su: 101 },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'partial',
    description:
      '(Runs) an optional output fails; PARTIALLY_SUCCEEDED, the code on that output item',
    applies_to: ['workflow'],
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      {
        at: 4,
        step: 'output',
        output: { contract: 'required', type: 'TEXT', text: 'The required part is done.' },
      },
      {
        at: 4,
        step: 'output',
        output: {
          contract: 'optional',
          type: 'JSON',
          data: null,
          error_code: 'OUTPUT_SCHEMA_MISMATCH',
        },
      },
      { at: 5, step: 'succeed' },
    ],
  },
  {
    name: 'missing-output',
    description:
      'a required output (of the Deployment or Workflow result contract) is not produced; FAILED with OUTPUT_MISSING (Turns and Runs)',
    applies_to: BOTH,
    steps: [
      { at: 1, step: 'running' },
      { at: 4, step: 'spend', su: SMALL_SU },
      { at: 5, step: 'succeed' },
    ],
  },
  ...RESULT_RULE_SCENARIOS,
  ...NEXT_STEP_SCENARIOS,
  ...PROGRESS_SCENARIOS,
]

const BUILTIN_BY_NAME = new Map(BUILTIN_SCENARIOS.map((s) => [s.name, s]))

/** A built-in scenario by name. */
export function builtinScenario(name: string): ScenarioDefinition | undefined {
  return BUILTIN_BY_NAME.get(name)
}

/** A scenario name: lowercase words joined by dashes, as the built-in ones. */
export const SCENARIO_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** Thrown by assertScenario with every problem found. */
export class ScenarioError extends Error {
  constructor(
    readonly scenario: string,
    readonly problems: string[],
  ) {
    super(`invalid scenario "${scenario}":\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ScenarioError'
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Checks a scenario definition; returns the list of problems (empty when valid), each naming its step. */
export function validateScenario(def: unknown): string[] {
  const problems: string[] = []
  if (!isObject(def)) return ['a scenario must be an object {name, description, applies_to, steps}']
  if (typeof def.name !== 'string' || !SCENARIO_NAME_PATTERN.test(def.name)) {
    problems.push('name must be lowercase words joined by dashes, e.g. "slow-then-fail"')
  }
  if (typeof def.description !== 'string') problems.push('description must be a string')
  if (
    !Array.isArray(def.applies_to) ||
    def.applies_to.length === 0 ||
    !def.applies_to.every((t) => t === 'deployment' || t === 'workflow')
  ) {
    problems.push('applies_to must be a non-empty list of "deployment" and/or "workflow"')
  }
  if (!Array.isArray(def.steps) || def.steps.length === 0) {
    problems.push('steps must be a non-empty list')
    return problems
  }
  let lastAt = 0
  let terminalAt: number | undefined
  def.steps.forEach((raw: unknown, i: number) => {
    const where = `steps[${i}]`
    if (!isObject(raw)) {
      problems.push(`${where} must be an object {at, step, ...}`)
      return
    }
    const { at, step } = raw
    if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) {
      problems.push(`${where}.at must be a number of seconds >= 0`)
    } else if (at < lastAt) {
      problems.push(
        `${where}.at (${at}) is earlier than the step before it (${lastAt}): steps must be in time order`,
      )
    } else {
      lastAt = at
    }
    if (typeof step !== 'string' || !(STEP_NAMES as readonly string[]).includes(step)) {
      problems.push(`${where}.step must be one of ${STEP_NAMES.join(', ')}`)
      return
    }
    if (terminalAt !== undefined)
      problems.push(`${where} comes after the terminal step at index ${terminalAt}`)
    if (TERMINAL.has(step as StepName)) terminalAt = i
    const allowed = new Set(['at', 'step'])
    switch (step) {
      case 'output':
        allowed.add('output')
        problems.push(...validateOutput(raw.output, `${where}.output`))
        break
      case 'step_start':
        allowed.add('id').add('queued_s')
        break
      case 'step_end':
        allowed.add('status')
        break
      case 'tool':
        allowed.add('name').add('call_id').add('arguments').add('result')
        if (typeof raw.name !== 'string' || !TOOL_NAME.test(raw.name))
          problems.push(`${where}.name must be a tool name: 1-64 letters, digits, _ . : or -`)
        if (
          raw.call_id !== undefined &&
          (typeof raw.call_id !== 'string' || !CALL_ID.test(raw.call_id))
        )
          problems.push(`${where}.call_id must be 1-128 letters, digits, _ . : or -`)
        break
      case 'spend':
        allowed.add('su')
        if (typeof raw.su !== 'number' || !(raw.su > 0))
          problems.push(`${where}.su must be a number > 0`)
        break
      case 'action_required':
        allowed.add('action').add('expires_after_s')
        if (raw.action !== undefined)
          problems.push(...actionSpecProblems(raw.action, `${where}.action`))
        if (
          raw.expires_after_s !== undefined &&
          !(typeof raw.expires_after_s === 'number' && raw.expires_after_s > 0)
        )
          problems.push(`${where}.expires_after_s must be a number of seconds > 0`)
        break
      case 'fail':
        allowed.add('code').add('message').add('status')
        if (raw.status !== undefined && !(FAIL_STATUSES as readonly unknown[]).includes(raw.status))
          problems.push(`${where}.status must be one of ${FAIL_STATUSES.join(', ')}`)
        if (!isExecutionCode(raw.code)) {
          problems.push(
            `${where}.code must be an execution error code of the catalog (e.g. EXECUTION_FAILED)`,
          )
        } else if (NOT_A_FAILURE[raw.code] !== undefined && (raw.status ?? 'FAILED') === 'FAILED') {
          problems.push(`${where}: ${NOT_A_FAILURE[raw.code]}`)
        }
        if (raw.message !== undefined && typeof raw.message !== 'string')
          problems.push(`${where}.message must be a string`)
        break
    }
    for (const k of Object.keys(raw))
      if (!allowed.has(k)) problems.push(`${where} has an unknown field "${k}"`)
  })
  problems.push(...runStepProblems(def.steps, def.applies_to))
  return problems
}

/** A step id: an identifier, as a tool name. */
const STEP_ID = /^[A-Za-z0-9_.:-]{1,64}$/

/** True when a script marks Run step boundaries (step_start / step_end). */
export const marksRunSteps = (steps: readonly ScenarioStep[]): boolean =>
  steps.some((s) => s.step === 'step_start')

/** The unique step ids a script marks, in order: a Run's progress.total when it marks any. */
export const uniqueStepIds = (steps: readonly ScenarioStep[]): string[] => [
  ...new Set(steps.flatMap((s) => (s.step === 'step_start' ? [s.id] : []))),
]

/**
 * The rules of step_start / step_end: Runs only; a step starts once the Run runs, one at a time, and ends
 * before the next starts; a step that succeeded does not run again (a retry follows a FAILED end); nothing
 * happens while a step waits queued.
 */
function runStepProblems(steps: unknown[], appliesTo: unknown): string[] {
  const isMarker = (raw: unknown) =>
    isObject(raw) && (raw.step === 'step_start' || raw.step === 'step_end')
  if (!steps.some(isMarker)) return []
  const problems: string[] = []
  if (!(Array.isArray(appliesTo) && appliesTo.length === 1 && appliesTo[0] === 'workflow'))
    problems.push(
      'step_start and step_end mark the steps of a Run: applies_to must be ["workflow"]',
    )
  let running = false
  let open: string | undefined
  const succeeded = new Set<string>()
  let quietUntil: { at: number; index: number } | undefined
  steps.forEach((raw, i) => {
    if (!isObject(raw)) return
    const where = `steps[${i}]`
    if (quietUntil && typeof raw.at === 'number' && raw.at < quietUntil.at)
      problems.push(
        `${where}.at (${raw.at}) falls in the queue wait of steps[${quietUntil.index}] (until ${quietUntil.at}): nothing happens while a step waits queued`,
      )
    if (raw.step === 'running') running = true
    if (raw.step === 'step_start') {
      const id = raw.id
      if (typeof id !== 'string' || !STEP_ID.test(id))
        problems.push(`${where}.id must be a step id: 1-64 letters, digits, _ . : or -`)
      if (!running)
        problems.push(`${where}: a step starts once the Run runs (a running step first)`)
      if (open !== undefined)
        problems.push(`${where}: step "${open}" is still open; end it (step_end) first`)
      if (typeof id === 'string' && succeeded.has(id))
        problems.push(
          `${where}: step "${id}" already succeeded; only a step that ended FAILED runs again`,
        )
      if (
        raw.queued_s !== undefined &&
        !(typeof raw.queued_s === 'number' && Number.isFinite(raw.queued_s) && raw.queued_s >= 0)
      )
        problems.push(`${where}.queued_s must be a number of seconds >= 0`)
      else if (typeof raw.queued_s === 'number' && typeof raw.at === 'number' && raw.queued_s > 0)
        quietUntil = { at: raw.at + raw.queued_s, index: i }
      open = typeof id === 'string' ? id : '?'
    }
    if (raw.step === 'step_end') {
      if (open === undefined) problems.push(`${where}: no step is open (step_start first)`)
      if (
        raw.status !== undefined &&
        !(STEP_END_STATUSES as readonly unknown[]).includes(raw.status)
      )
        problems.push(`${where}.status must be one of ${STEP_END_STATUSES.join(', ')}`)
      if (open !== undefined && (raw.status ?? 'SUCCEEDED') === 'SUCCEEDED') succeeded.add(open)
      open = undefined
    }
  })
  return problems
}

/** A tool name and a call id: identifiers, so public content never carries free text through them. */
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,64}$/
const CALL_ID = /^[A-Za-z0-9_.:-]{1,128}$/

/**
 * Execution codes the transition table (States and transitions) never gives a FAILED execution: a script's
 * `fail` step cannot end FAILED with them (a next-step scenario may end EXPIRED or CANCELED with them, as the
 * table does). Each names the rule it would break.
 */
const NOT_A_FAILURE: Readonly<Partial<Record<ErrorCode, string>>> = {
  QUEUE_TIMEOUT:
    'the transition table ends an execution with QUEUE_TIMEOUT as EXPIRED (a queued execution whose queue time limit passed), never FAILED; the mock applies queue_seconds itself',
  CANCELED:
    'the transition table ends an execution with CANCELED as CANCELED (a cancel request), never FAILED; rehearse it with a cancel request',
  AUTHORIZATION_REVOKED:
    "the transition table ends an execution with AUTHORIZATION_REVOKED as CANCELED (its key, scope or Deployment became unusable), never FAILED; rehearse it with the control API's revoke, expire, scopes, deployments or retire",
  SESSION_DELETED:
    'the transition table ends an execution with SESSION_DELETED as CANCELED (its Session was deleted), never FAILED; rehearse it with DELETE /v1/sessions/{id}',
}

/** validateScenario, throwing a ScenarioError; narrows the value to a ScenarioDefinition. */
export function assertScenario(def: unknown): asserts def is ScenarioDefinition {
  const problems = validateScenario(def)
  if (problems.length > 0) {
    const name = isObject(def) && typeof def.name === 'string' ? def.name : '?'
    throw new ScenarioError(name, problems)
  }
}

function isExecutionCode(code: unknown): code is ErrorCode {
  return (
    typeof code === 'string' &&
    Object.hasOwn(ERROR_CATALOG, code) &&
    'execution' in ERROR_CATALOG[code as ErrorCode]
  )
}

const OUTPUT_FIELDS: Record<string, string[]> = {
  TEXT: ['text', 'repeat'],
  JSON: ['data', 'schema_ref', 'repeat'],
  FILE: ['filename', 'mime_type', 'content', 'repeat', 'path', 'prepare_seconds', 'prepare_fails'],
  URL: ['url', 'access'],
}

/** A scripted result is at most this large after `repeat` (keeps the mock's memory bounded). */
export const MAX_SCRIPTED_BYTES = 128 * 1024 * 1024

function validateOutput(o: unknown, where: string): string[] {
  if (!isObject(o)) return [`${where} must be an object {type, ...}`]
  const problems: string[] = []
  const type = o.type
  if (typeof type !== 'string' || !(type in OUTPUT_FIELDS)) {
    return [`${where}.type must be one of TEXT, JSON, FILE, URL`]
  }
  const allowed = new Set([
    'type',
    'key',
    'contract',
    'visibility',
    'error_code',
    'check_contract_type',
    ...OUTPUT_FIELDS[type]!,
  ])
  for (const k of Object.keys(o))
    if (!allowed.has(k)) problems.push(`${where} has an unknown field "${k}" for type ${type}`)
  if (o.key !== undefined && (typeof o.key !== 'string' || o.key === ''))
    problems.push(`${where}.key must be a non-empty string`)
  if (o.contract !== undefined && o.contract !== 'required' && o.contract !== 'optional') {
    problems.push(`${where}.contract must be "required" or "optional"`)
  }
  if (
    o.visibility !== undefined &&
    !['INTERMEDIATE', 'PARTIAL', 'FINAL'].includes(o.visibility as string)
  ) {
    problems.push(`${where}.visibility must be INTERMEDIATE, PARTIAL or FINAL`)
  }
  if (o.error_code !== undefined && !isExecutionCode(o.error_code)) {
    problems.push(`${where}.error_code must be an execution error code of the catalog`)
  }
  if (o.check_contract_type !== undefined && typeof o.check_contract_type !== 'boolean')
    problems.push(`${where}.check_contract_type must be a boolean`)
  if (o.repeat !== undefined) {
    if (!Number.isInteger(o.repeat) || (o.repeat as number) < 1) {
      problems.push(`${where}.repeat must be an integer >= 1`)
    } else {
      const unit =
        type === 'JSON' ? JSON.stringify(o.data ?? null) : String(o.text ?? o.content ?? '')
      if (Buffer.byteLength(unit) * (o.repeat as number) > MAX_SCRIPTED_BYTES)
        problems.push(`${where}.repeat makes the result larger than ${MAX_SCRIPTED_BYTES} bytes`)
    }
  }
  switch (type) {
    case 'TEXT':
      if (typeof o.text !== 'string') problems.push(`${where}.text must be a string`)
      break
    case 'JSON':
      if (!('data' in o)) problems.push(`${where}.data is required (any JSON value)`)
      if (o.schema_ref !== undefined && typeof o.schema_ref !== 'string')
        problems.push(`${where}.schema_ref must be a string`)
      break
    case 'FILE':
      for (const f of ['filename', 'mime_type', 'content']) {
        if (typeof o[f] !== 'string') problems.push(`${where}.${f} must be a string`)
      }
      if (o.path !== undefined && typeof o.path !== 'string')
        problems.push(`${where}.path must be a string`)
      if (
        o.prepare_seconds !== undefined &&
        (typeof o.prepare_seconds !== 'number' || !(o.prepare_seconds >= 0))
      )
        problems.push(`${where}.prepare_seconds must be a number of seconds >= 0`)
      if (o.prepare_fails !== undefined && typeof o.prepare_fails !== 'boolean')
        problems.push(`${where}.prepare_fails must be a boolean`)
      break
    case 'URL':
      if (typeof o.url !== 'string') problems.push(`${where}.url must be a string`)
      if (
        o.access !== undefined &&
        !['PUBLIC', 'AUTHENTICATED', 'UNKNOWN'].includes(o.access as string)
      ) {
        problems.push(`${where}.access must be PUBLIC, AUTHENTICATED or UNKNOWN`)
      }
      break
  }
  return problems
}
