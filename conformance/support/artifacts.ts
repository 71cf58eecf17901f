/**
 * Artifact helpers. Artifacts come from executions: checks that can run anywhere take a FILE output of the
 * target's own making (support/file-outputs.ts); checks that need an artifact of a chosen content, retention or
 * a deletion make one through the mock's control API (POST /_mock/artifacts) and are skipped on a real target.
 */
import type { ArtifactCreated } from './control.js'
import type { Target } from './target.js'

/** The control API, or a skipped test on a target without virtual time. */
export function mockControl(target: Target, ctx: { skip: (note?: string) => void }) {
  if (!target.capabilities.virtualTime || !target.control)
    ctx.skip(
      'mock only: the artifact is made through the control API with a chosen content, retention or deletion (a real target has no way to make one on demand)',
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

/**
 * The server's time of an answer, for bounds such as "valid at most 60 seconds": a mock's virtual time (exact),
 * else the answer's Date header, which has whole seconds and is written at or after the issue, so the issue
 * came less than `slackMs` (1 s) after it. Undefined on a real target whose answer has no Date header.
 */
export async function answeredAt(
  target: Target,
  res: { headers: Record<string, string> },
): Promise<{ ms: number; slackMs: number } | undefined> {
  if (target.control) return { ms: await nowMs(target), slackMs: 0 }
  const date = Date.parse(res.headers['date'] ?? '')
  return Number.isNaN(date) ? undefined : { ms: date, slackMs: 1000 }
}

/**
 * The Deployment the world's key limited to one Deployment may call (GET /v1/deployments with that key lists it
 * alone), and the world's other ACTIVE Deployments, which that key may not call.
 */
export async function oneDeploymentKey(
  target: Target,
  key: string,
): Promise<{ allowed: string | undefined; others: string[] }> {
  const res = await target.api.get('/v1/deployments', { key })
  const allowed =
    res.status === 200 ? (res.body as { items: { id: string }[] }).items[0]?.id : undefined
  const { active, active2, fileOutput } = target.world.deployments
  const others = [...new Set([active, active2, fileOutput])].filter(
    (id): id is string => id !== undefined && id !== allowed,
  )
  return { allowed, others }
}
