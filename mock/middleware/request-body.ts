/**
 * Reads the request body of a documented operation (Endpoints; Limits > Sizes and counts): JSON bodies are
 * uncompressed application/json of at most 64 KiB (415 UNSUPPORTED_MEDIA_TYPE, 413 INPUT_TOO_LARGE, 400
 * INVALID_INPUT when unparseable); uploads are uncompressed multipart/form-data with exactly one part named
 * `file` (422 INVALID_INPUT otherwise) of at most 20 MiB (413 FILE_TOO_LARGE). The result is c.var.input.
 */
import type { Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { Env, RequestInput } from '../deps.js'
import { MAX_FILE_BYTES } from '../domain/file-rules.js'
import { ApiError } from '../errors.js'
import type { OperationSpec } from '../http/operations.js'
import type { Guard } from './guard.js'
import { framedByNode, headerOf } from './node-request.js'

/** JSON request bodies are at most 64 KiB. */
export const MAX_JSON_BYTES = 64 * 1024
/** Room for the multipart envelope around a 20 MiB file. */
const MULTIPART_OVERHEAD = 64 * 1024

const refuseCompressed = (encoding: string | undefined) => {
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
      message: 'Request bodies must not be compressed.',
      details: { content_encoding: encoding },
    })
  }
}

/**
 * Hono's bodyLimit without building a full Request for a request Node framed (reading c.req.raw.body makes
 * @hono/node-server build one, for every request, GETs included). Over HTTP (mock/server.ts gives the app the
 * IncomingMessage as c.env.incoming) a body's length is its Content-Length, checked from the header, and a
 * request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 6.3). Chunked bodies and
 * in-process requests (app.request, fetch) go through Hono's bodyLimit, which counts while it reads.
 */
function limitBody(maxSize: number, onError: (c: Context<Env>) => never): Guard {
  const counted = bodyLimit({ maxSize, onError })
  // Hono's bodyLimit reads (and counts) the whole body before it calls next: nothing is left for next to do.
  const read = async () => undefined
  return function limitBody(c) {
    if (!framedByNode(c) || headerOf(c, 'transfer-encoding') !== undefined)
      return counted(c, read) as Promise<void>
    const length = headerOf(c, 'content-length')
    if (length !== undefined && parseInt(length, 10) > maxSize) onError(c)
  }
}

const mediaTypeOf = (header: string | undefined) =>
  header === 'application/json' ? header : (header ?? '').split(';')[0]!.trim().toLowerCase()

export const readBody = (op: OperationSpec): Guard[] => {
  if (op.body?.mediaType === 'multipart/form-data') {
    return [
      function refuseCompressedUpload(c) {
        refuseCompressed(headerOf(c, 'content-encoding'))
      },
      limitBody(MAX_FILE_BYTES + MULTIPART_OVERHEAD, () => {
        throw new ApiError('FILE_TOO_LARGE', { message: 'Uploaded files are at most 20 MiB.' })
      }),
      async function readUpload(c) {
        if (mediaTypeOf(headerOf(c, 'content-type')) !== 'multipart/form-data') {
          throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
            message: 'Uploads are multipart/form-data with one part named file.',
          })
        }
        let form: Record<string, unknown>
        try {
          form = (await c.req.parseBody({ all: true })) as Record<string, unknown>
        } catch {
          throw new ApiError('INVALID_INPUT', {
            status: 400,
            message: 'The multipart body is malformed.',
          })
        }
        const names = Object.keys(form)
        const file = form.file
        if (names.length !== 1 || !(file instanceof File)) {
          throw new ApiError('INVALID_INPUT', {
            status: 422,
            message: 'An upload has exactly one part, named file, holding one file.',
            details: { parts: names },
          })
        }
        if (file.size > MAX_FILE_BYTES)
          throw new ApiError('FILE_TOO_LARGE', { message: 'Uploaded files are at most 20 MiB.' })
        const input: RequestInput = {
          ...c.var.input,
          body: undefined,
          query: {},
          upload: {
            filename: file.name,
            mimeType: file.type,
            bytes: new Uint8Array(await file.arrayBuffer()),
          },
        }
        c.set('input', input)
      },
    ]
  }
  return [
    function refuseCompressedJson(c) {
      if (op.body) refuseCompressed(headerOf(c, 'content-encoding'))
    },
    limitBody(MAX_JSON_BYTES, () => {
      throw new ApiError('INPUT_TOO_LARGE', { message: 'JSON request bodies are at most 64 KiB.' })
    }),
    function readJson(c) {
      // An operation without a body reads nothing: no promise to wait for.
      if (!op.body) {
        c.set('input', Object.assign({}, c.var.input, { body: undefined, query: {} }))
        return
      }
      return readJsonBody(c)
    },
  ]
}

/** The JSON body of an operation that takes one (undefined when empty), as c.var.input.body. */
async function readJsonBody(c: Context<Env>): Promise<void> {
  const text = await c.req.text()
  let body: unknown
  if (text.length > 0) {
    const type = mediaTypeOf(headerOf(c, 'content-type'))
    if (type !== 'application/json' && !type.endsWith('+json')) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
        message: 'Request bodies are JSON (Content-Type: application/json).',
      })
    }
    try {
      body = JSON.parse(text)
    } catch {
      throw new ApiError('INVALID_INPUT', {
        status: 400,
        message: 'The request body is not valid JSON.',
      })
    }
  }
  c.set('input', Object.assign({}, c.var.input, { body, text, query: {} }))
}
