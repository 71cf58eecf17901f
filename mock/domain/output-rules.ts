/**
 * Result rules on what an execution produces (Output items; Limits > Sizes and counts; Errors > OUTPUT_*,
 * INVALID_FILENAME, UNSUPPORTED_FILE_TYPE, RUN_STORAGE_LIMIT): inline-or-file decisions, JSON and file limits,
 * the attachments-folder path rule, produced file types and the output contract. Pure functions.
 */
import type { ValidateFunction } from 'ajv'
import { resultContractAjv } from '../util/ajv.js'
import { extensionOf, filenameProblem, isAllowedPair } from './file-rules.js'
import { memoize } from '../util/memo.js'
import { JSON_MAX_ARRAY_ELEMENTS, JSON_MAX_DEPTH } from './json-limits.js'

const KiB = 1024
const MiB = 1024 * KiB

/** SIZE-004: a TEXT result up to 64 KiB (UTF-8 bytes) is inline; a larger one is delivered as a file. */
export const TEXT_INLINE_MAX_BYTES = 64 * KiB
/** SIZE-005: a JSON result is inline up to 64 KiB and 100 array elements in total. */
export const JSON_INLINE_MAX_BYTES = 64 * KiB
export const JSON_INLINE_MAX_ELEMENTS = 100
/** SIZE-006: a JSON result over 10 MiB fails the execution (depth and elements: json-limits.ts). */
export const JSON_MAX_BYTES = 10 * MiB
/** SIZE-011: a result file is at most 10 MiB; an execution produces at most 10 result files. */
export const RESULT_FILE_MAX_BYTES = 10 * MiB
export const RESULT_FILES_MAX = 10
/** SIZE-012: the files of one execution are at most 100 MiB in total. */
export const EXECUTION_FILES_MAX_BYTES = 100 * MiB
/** TIME-002: result file preparation may take at most 300 seconds after the execution ends. */
export const PREPARATION_MAX_S = 300
/** OUTPUT_PATH_DENIED: a returned file must come from the Session attachments folder. */
export const ATTACHMENTS_FOLDER = 'attachments'

export type ResultCode =
  | 'OUTPUT_LIMIT_EXCEEDED'
  | 'OUTPUT_SCHEMA_MISMATCH'
  | 'OUTPUT_PATH_DENIED'
  | 'OUTPUT_CONTAINS_CREDENTIALS'
  | 'OUTPUT_URL_INVALID'
  | 'INVALID_FILENAME'
  | 'UNSUPPORTED_FILE_TYPE'

/** A broken rule: the code and an English message for the error object. */
export type RuleBreak = { code: ResultCode; message: string }

/** The bytes of a JSON value as delivered (compact UTF-8 serialisation). */
export const jsonBytes = (value: unknown): number =>
  Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8')

/**
 * SIZE-006: OUTPUT_LIMIT_EXCEEDED when a JSON result is over 10 MiB, 10,000 elements or depth 16; `shape` is
 * jsonShape() of json-limits.ts.
 */
export function jsonLimitBreak(shape: { depth: number; elements: number }, bytes: number) {
  if (shape.depth > JSON_MAX_DEPTH)
    return limit(`The JSON result is nested ${shape.depth} deep; at most ${JSON_MAX_DEPTH}.`)
  if (shape.elements > JSON_MAX_ARRAY_ELEMENTS)
    return limit(
      `The JSON result has ${shape.elements} array elements in total; at most ${JSON_MAX_ARRAY_ELEMENTS}.`,
    )
  if (bytes > JSON_MAX_BYTES)
    return limit(`The JSON result is ${bytes} bytes; at most ${JSON_MAX_BYTES} (10 MiB).`)
  return undefined
}

/** SIZE-005: whether a JSON result (within the overall limits) stays inline. */
export const jsonIsInline = (shape: { elements: number }, bytes: number): boolean =>
  bytes <= JSON_INLINE_MAX_BYTES && shape.elements <= JSON_INLINE_MAX_ELEMENTS

/** SIZE-004: whether a TEXT result stays inline (at most 64 KiB of UTF-8). */
export const textIsInline = (text: string): boolean =>
  Buffer.byteLength(text, 'utf8') <= TEXT_INLINE_MAX_BYTES

/** SIZE-011: OUTPUT_LIMIT_EXCEEDED for a result file over 10 MiB. */
export const fileSizeBreak = (bytes: number): RuleBreak | undefined =>
  bytes > RESULT_FILE_MAX_BYTES
    ? limit(`A result file is ${bytes} bytes; at most ${RESULT_FILE_MAX_BYTES} (10 MiB).`)
    : undefined

/** SIZE-011: OUTPUT_LIMIT_EXCEEDED for the 11th FILE result of one execution. */
export const fileCountBreak = (filesSoFar: number): RuleBreak | undefined =>
  filesSoFar >= RESULT_FILES_MAX
    ? limit(`The execution returned more than ${RESULT_FILES_MAX} result files.`)
    : undefined

/**
 * SIZE-012, ERR-052: a result that would take the execution's files past 100 MiB in total fails it with
 * OUTPUT_LIMIT_EXCEEDED (the document's in-execution code for a result over a size limit; RUN_STORAGE_LIMIT is
 * the 413 of uploads).
 */
export const storageBreak = (inUse: number, adding: number): RuleBreak | undefined =>
  inUse + adding > EXECUTION_FILES_MAX_BYTES
    ? {
        code: 'OUTPUT_LIMIT_EXCEEDED',
        message: `The files of this execution would take ${inUse + adding} bytes; at most ${EXECUTION_FILES_MAX_BYTES} (100 MiB).`,
      }
    : undefined

/**
 * OUTPUT_PATH_DENIED unless the path lies inside the Session attachments folder: relative, first segment
 * `attachments`, no `.`/`..`/empty segments after normalising backslashes. No path given: the file is the
 * script's own attachment (allowed).
 */
export function pathBreak(path: string | undefined): RuleBreak | undefined {
  if (path === undefined) return undefined
  const segments = path.replace(/\\/g, '/').split('/')
  const inside =
    segments.length >= 2 &&
    segments[0] === ATTACHMENTS_FOLDER &&
    segments.slice(1).every((s) => s !== '' && s !== '.' && s !== '..')
  return inside
    ? undefined
    : {
        code: 'OUTPUT_PATH_DENIED',
        message: 'The result file is outside the Session attachments folder.',
      }
}

const TEXT_TYPES = new Set(['txt', 'md', 'markdown', 'csv', 'json'])
const utf8 = new TextDecoder('utf-8', { fatal: true })
const startsWith = (bytes: Uint8Array, magic: readonly number[], at = 0) =>
  magic.every((b, i) => bytes[at + i] === b)
const latin1Includes = (bytes: Uint8Array, needle: string) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(needle, 0, 'latin1')

/** The leading bytes of each binary type; Office files are ZIP containers holding their part folder. */
const MAGIC: Record<string, (b: Uint8Array) => boolean> = {
  pdf: (b) => startsWith(b, [0x25, 0x50, 0x44, 0x46, 0x2d]) && !latin1Includes(b, '/Encrypt'),
  png: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  jpg: (b) => startsWith(b, [0xff, 0xd8, 0xff]),
  jpeg: (b) => startsWith(b, [0xff, 0xd8, 0xff]),
  webp: (b) =>
    startsWith(b, [0x52, 0x49, 0x46, 0x46]) && startsWith(b, [0x57, 0x45, 0x42, 0x50], 8),
  docx: (b) => office(b, 'word/'),
  xlsx: (b) => office(b, 'xl/'),
  pptx: (b) => office(b, 'ppt/'),
}
const office = (b: Uint8Array, part: string) =>
  startsWith(b, [0x50, 0x4b, 0x03, 0x04]) &&
  latin1Includes(b, part) &&
  !latin1Includes(b, 'vbaProject.bin')

/**
 * ERR-048: UNSUPPORTED_FILE_TYPE for a produced file whose extension and MIME type are not an allowed pair or
 * whose content is not that format (text: UTF-8 without NUL, JSON parses; binary: leading bytes) or unsafe
 * (encrypted PDF, macro Office document). Synchronous (it runs inside a timer's transaction), so binary
 * types are judged by their leading bytes rather than by the upload path's file-type detection.
 */
export function producedFileTypeBreak(
  filename: string,
  mime: string,
  bytes: Uint8Array,
): RuleBreak | undefined {
  const bad = (why: string): RuleBreak => ({
    code: 'UNSUPPORTED_FILE_TYPE',
    message: `The result file ${why}.`,
  })
  if (!isAllowedPair(filename, mime)) return bad('type (extension and MIME type) is not allowed')
  const ext = extensionOf(filename)
  if (TEXT_TYPES.has(ext)) {
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return bad('is not UTF-8 text')
    }
    if (text.includes('\u0000')) return bad('is not text')
    if (ext === 'json') {
      try {
        JSON.parse(text)
      } catch {
        return bad('is not JSON')
      }
    }
    return undefined
  }
  return MAGIC[ext]?.(bytes) ? undefined : bad(`content is not a safe ${ext} file`)
}

/** ERR-046: INVALID_FILENAME for a produced file name (the upload rule of file-rules.ts). */
export const filenameBreak = (name: string): RuleBreak | undefined =>
  filenameProblem(name)
    ? {
        code: 'INVALID_FILENAME',
        message:
          'The result file name is empty, over 255 bytes, or has a slash, backslash or control character.',
      }
    : undefined

/** An entry of a result contract as the rules read it (`schema` is an optional JSON Schema of a JSON entry). */
export type ContractRule = { key: string; type: string; required: boolean; schema?: unknown }

/** A compiled validator per schema text (contracts are few; a schema that does not compile checks nothing). */
const validatorOfText = memoize((text): ValidateFunction | null => {
  try {
    return resultContractAjv().compile(JSON.parse(text) as object)
  } catch {
    return null
  }
})
const validatorFor = (schema: unknown): ValidateFunction | null =>
  validatorOfText(JSON.stringify(schema))

/**
 * ERR-050: OUTPUT_SCHEMA_MISMATCH when an output breaks its contract entry: its type differs from the entry's
 * type (when `checkType`), or a JSON output's data does not satisfy the entry's `schema`. An output whose key
 * is not in the contract is not judged here.
 */
export function contractBreak(
  contract: readonly ContractRule[],
  output: { key: string; type: string; data?: unknown },
  checkType: boolean,
): RuleBreak | undefined {
  const entry = contract.find((c) => c.key === output.key)
  if (!entry) return undefined
  if (checkType && entry.type !== output.type)
    return mismatch(
      `The output "${output.key}" is ${output.type}; the contract says ${entry.type}.`,
    )
  if (output.type === 'JSON' && entry.schema !== undefined && entry.schema !== null) {
    const validate = validatorFor(entry.schema)
    if (validate && !validate(output.data)) {
      const first = validate.errors?.[0]
      const where = first ? ` (${first.instancePath || '/'} ${first.message ?? ''})` : ''
      return mismatch(`The output "${output.key}" does not match its schema${where}.`)
    }
  }
  return undefined
}

const limit = (message: string): RuleBreak => ({ code: 'OUTPUT_LIMIT_EXCEEDED', message })
const mismatch = (message: string): RuleBreak => ({ code: 'OUTPUT_SCHEMA_MISMATCH', message })
