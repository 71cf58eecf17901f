/**
 * Owner login token of the management paths /api/runtime/projects/{project_id}/... (Authentication 7): the
 * bearer must be the owner token of that Project; an API key never works here (401 INVALID_API_KEY, the
 * mock's assumed code: the document does not show the management errors).
 */
import { ApiError } from '../errors.js'
import { getProjectByOwnerToken } from '../store/projects.js'
import { bearerToken } from './api-key.js'
import type { Guard } from './guard.js'

export const authenticateOwner = (): Guard =>
  function authenticateOwner(c) {
    const token = bearerToken(c.req.header('Authorization'))
    const project = token === undefined ? undefined : getProjectByOwnerToken(c.var.deps.db, token)
    if (!project)
      throw new ApiError('INVALID_API_KEY', {
        message: 'The management API needs the owner login token.',
      })
    // Another Project's id is indistinguishable from an absent one.
    if (project.id !== c.req.param('project_id')) throw new ApiError('NOT_FOUND')
    c.set('ownerProjectId', project.id)
  }
