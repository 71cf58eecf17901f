/**
 * Artifact helpers: artifacts come from executions, so the tests make them through the mock's control API
 * (POST /_mock/artifacts); tests using them are mock-only and skipped on a real target.
 */
import type { ArtifactCreated } from './control.js'
import type { Target } from './target.js'

/** The control API, or a skipped test on a target without virtual time. */
export function mockControl(target: Target, ctx: { skip: (note?: string) => void }) {
  if (!target.capabilities.virtualTime || !target.control)
    ctx.skip(
      'mock only: the artifact is made through the control API (a real target has no way to make one on demand)',
    )
  return target.control!
}

/** Creates an artifact of the world's Project (default: a small text file of its first active Deployment). */
export function makeArtifact(
  target: Target,
  opts: {
    deploymentId?: string
    filename?: string
    mimeType?: string
    content?: Buffer | string
    retentionSeconds?: number
  } = {},
): Promise<ArtifactCreated> {
  return target.control!.createArtifact({
    project_id: target.world.projectId,
    deployment_id: opts.deploymentId ?? target.world.deployments.active,
    filename: opts.filename ?? 'report.txt',
    mime_type: opts.mimeType ?? 'text/plain',
    content: opts.content ?? 'quarterly report\n',
    ...(opts.retentionSeconds === undefined ? {} : { retention_seconds: opts.retentionSeconds }),
  })
}

/** The virtual time now, in ms. */
export const nowMs = async (target: Target): Promise<number> =>
  Date.parse((await target.control!.clock()).now)
