/** Opaque page cursors: base64url of "<resource id>:<position>"; a cursor of another resource is INVALID_CURSOR. */
import { ApiError } from '../errors.js'

export const encodeCursor = (resourceId: string, position: number): string =>
  Buffer.from(`${resourceId}:${position}`).toString('base64url')

/** The position a cursor points after, if it belongs to this resource; else 400 INVALID_CURSOR. */
export function decodeCursor(cursor: string, resourceId: string): number {
  const [id, pos] = Buffer.from(cursor, 'base64url').toString('utf8').split(':')
  const position = Number(pos)
  if (id !== resourceId || !Number.isInteger(position) || position < 0) {
    throw new ApiError('INVALID_CURSOR', {
      message: 'This cursor does not belong to this resource.',
    })
  }
  return position
}
