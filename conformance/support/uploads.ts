/**
 * Upload helpers of the files and artifacts tests: the document's allowed file types with a sample file of each
 * (fixtures/files), and upload() through the suite's client with a fresh Idempotency-Key by default.
 */
import { createHash, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { packageFile } from '../../spec/index.js'
import type { ApiResponse } from './client.js'
import { sendMultipart, type Part } from './multipart.js'
import { retryRateLimited } from './pace.js'
import type { Target } from './target.js'

/** The bytes of a sample file in fixtures/files. */
export const sample = (name: string): Buffer => readFileSync(packageFile('fixtures', 'files', name))

/**
 * Limits > Sizes and counts, "Allowed file types": each extension with its registered MIME type (the type the
 * document's "extension and MIME type must match" pairs it with) and a sample file that really is that format.
 */
export const ALLOWED_TYPES: readonly { ext: string; mime: string; sample: string }[] = [
  { ext: 'txt', mime: 'text/plain', sample: 'hello.txt' },
  { ext: 'md', mime: 'text/markdown', sample: 'notes.md' },
  { ext: 'markdown', mime: 'text/markdown', sample: 'notes.md' },
  { ext: 'csv', mime: 'text/csv', sample: 'table.csv' },
  { ext: 'json', mime: 'application/json', sample: 'data.json' },
  { ext: 'pdf', mime: 'application/pdf', sample: 'document.pdf' },
  { ext: 'png', mime: 'image/png', sample: 'pixel.png' },
  { ext: 'jpg', mime: 'image/jpeg', sample: 'photo.jpg' },
  { ext: 'jpeg', mime: 'image/jpeg', sample: 'photo.jpg' },
  { ext: 'webp', mime: 'image/webp', sample: 'image.webp' },
  {
    ext: 'docx',
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    sample: 'report.docx',
  },
  {
    ext: 'xlsx',
    mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    sample: 'sheet.xlsx',
  },
  {
    ext: 'pptx',
    mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    sample: 'slides.pptx',
  },
]

export const sha256Hex = (bytes: Buffer | string): string =>
  createHash('sha256').update(bytes).digest('hex')

export type UploadOptions = {
  /** Default: the world's full key. */
  key?: string
  /** Default: a new key per call. */
  idem?: string
  /** Default: /v1/files. */
  path?: string
  headers?: Record<string, string>
}

/** Uploads one file as the one `file` part (retried after a 429, see pace.ts). */
export function upload(
  target: Target,
  file: { filename: string; contentType: string; content: Buffer | string },
  opts: UploadOptions = {},
): Promise<ApiResponse> {
  return uploadParts(target, [{ name: 'file', ...file }], opts)
}

/** Uploads arbitrary parts (extra fields, extra files) to test the one-part rule. */
export function uploadParts(
  target: Target,
  parts: Part[],
  opts: UploadOptions = {},
): Promise<ApiResponse> {
  const idem = opts.idem ?? randomUUID()
  return retryRateLimited(target, () =>
    sendMultipart(target.api, opts.path ?? '/v1/files', parts, {
      key: opts.key ?? target.world.keys.full,
      idem,
      headers: opts.headers,
    }),
  )
}

/** hello.txt as a text/plain upload. */
export const helloTxt = () => ({
  filename: 'hello.txt',
  contentType: 'text/plain',
  content: sample('hello.txt'),
})
