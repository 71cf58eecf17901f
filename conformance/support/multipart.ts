/**
 * multipart/form-data bodies built byte by byte, so a test controls the exact filename on the wire (supertest's
 * form-data rewrites names: basename, backslashes). Names go as raw UTF-8 in the quoted string (RFC 7578
 * 4.2); only `"`, CR and LF are percent-encoded, as browsers do (WHATWG multipart/form-data encoding).
 */
import { randomUUID } from 'node:crypto'
import type { ApiClient, ApiResponse, RequestOptions } from './client.js'

export type Part = {
  /** The form field name (`file` for the document's one upload part). */
  name: string
  /** Present for a file part. */
  filename?: string
  contentType?: string
  content: Buffer | string
}

const escapeName = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')

/** The body and Content-Type header of a multipart/form-data request. */
export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----conformance-${randomUUID()}`
  const chunks: Buffer[] = []
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(p.name)}"`
    if (p.filename !== undefined) head += `; filename="${escapeName(p.filename)}"`
    head += '\r\n'
    if (p.contentType !== undefined) head += `Content-Type: ${p.contentType}\r\n`
    chunks.push(Buffer.from(`${head}\r\n`, 'utf8'), Buffer.from(p.content), Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** POSTs a multipart body made of `parts` (the response passes the suite's checks as usual). */
export function sendMultipart(
  api: ApiClient,
  path: string,
  parts: Part[],
  opts: RequestOptions = {},
): Promise<ApiResponse> {
  const { body, contentType } = multipart(parts)
  return api.send('POST', path, body, {
    ...opts,
    headers: { 'Content-Type': contentType, ...opts.headers },
  })
}
