/**
 * The document's rules for uploaded files (Limits > Sizes and counts, Errors): allowed extension and MIME pairs,
 * content that really is that format (magic bytes via file-type), unsafe content (macro documents, encrypted
 * PDF) and filename rules. Pure functions: no HTTP, no SQL.
 */
import { fileTypeFromBuffer } from 'file-type'

/** Allowed file types: extension -> accepted MIME types (the first is canonical). FILE-0xx in requirements. */
export const ALLOWED_FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  txt: ['text/plain'],
  md: ['text/markdown', 'text/x-markdown'],
  markdown: ['text/markdown', 'text/x-markdown'],
  csv: ['text/csv'],
  json: ['application/json'],
  pdf: ['application/pdf'],
  png: ['image/png'],
  jpg: ['image/jpeg'],
  jpeg: ['image/jpeg'],
  webp: ['image/webp'],
  docx: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  xlsx: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  pptx: ['application/vnd.openxmlformats-officedocument.presentationml.presentation'],
}

/** Uploaded files are at most 20 MiB each. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024

const TEXT_EXTENSIONS = new Set(['txt', 'md', 'markdown', 'csv'])

/** The lowercase extension of a filename, or '' when it has none. */
export const extensionOf = (filename: string): string => {
  const dot = filename.lastIndexOf('.')
  return dot <= 0 ? '' : filename.slice(dot + 1).toLowerCase()
}

/** The MIME type without parameters, lowercased: `text/plain; charset=utf-8` -> `text/plain`. */
export const bareMimeType = (mime: string): string => mime.split(';')[0]!.trim().toLowerCase()

/**
 * INVALID_FILENAME when a name is empty, over 255 bytes, or has a slash, backslash or control character.
 * @returns the error code, or undefined when the name is allowed
 */
export function filenameProblem(name: string): 'INVALID_FILENAME' | undefined {
  if (name.length === 0 || Buffer.byteLength(name, 'utf8') > 255) return 'INVALID_FILENAME'
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f\u007f-\u009f]/.test(name)) return 'INVALID_FILENAME'
  return undefined
}

/** True when the extension and MIME type are an allowed pair (optionally narrowed by a Deployment). */
export function isAllowedPair(
  filename: string,
  mime: string,
  narrowedTo?: readonly string[] | null,
): boolean {
  const allowed = ALLOWED_FILE_TYPES[extensionOf(filename)]
  const bare = bareMimeType(mime)
  if (!allowed?.includes(bare)) return false
  return !narrowedTo || narrowedTo.map(bareMimeType).includes(allowed[0]!)
}

/** The canonical MIME type of an allowed filename. */
export const canonicalMimeType = (filename: string): string | undefined =>
  ALLOWED_FILE_TYPES[extensionOf(filename)]?.[0]

const utf8 = new TextDecoder('utf-8', { fatal: true })
const contains = (bytes: Uint8Array, needle: string) =>
  Buffer.from(bytes).includes(needle, 0, 'latin1')

/**
 * UNSUPPORTED_FILE_TYPE when the pair is not allowed, the content is not that format, or it is unsafe
 * (a macro-enabled Office document, an encrypted PDF).
 */
export async function fileTypeProblem(
  filename: string,
  mime: string,
  bytes: Uint8Array,
): Promise<'UNSUPPORTED_FILE_TYPE' | undefined> {
  const ext = extensionOf(filename)
  if (!isAllowedPair(filename, mime)) return 'UNSUPPORTED_FILE_TYPE'
  if (TEXT_EXTENSIONS.has(ext) || ext === 'json') {
    // Text is judged by its bytes (UTF-8 without NUL), not by magic numbers: file-type also matches plain
    // text such as "BMW …" (bmp) or "MZ …" (exe), and an XML text is still text.
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return 'UNSUPPORTED_FILE_TYPE'
    }
    if (text.includes('\u0000')) return 'UNSUPPORTED_FILE_TYPE'
    if (ext === 'json') {
      try {
        JSON.parse(text)
      } catch {
        return 'UNSUPPORTED_FILE_TYPE'
      }
    }
    return undefined
  }
  const detected = await fileTypeFromBuffer(bytes)
  const expected = ext === 'jpeg' ? 'jpg' : ext
  if (detected?.ext !== expected) return 'UNSUPPORTED_FILE_TYPE'
  if (ext === 'pdf' && contains(bytes, '/Encrypt')) return 'UNSUPPORTED_FILE_TYPE'
  if (['docx', 'xlsx', 'pptx'].includes(ext) && contains(bytes, 'vbaProject.bin'))
    return 'UNSUPPORTED_FILE_TYPE'
  return undefined
}
