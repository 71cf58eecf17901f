/**
 * Work preparations as the API shows them (shapes assumed, see spec/openapi.yaml x-assumed), and the changes
 * the routes and the control API make to them. The rules live in mock/domain/preparation.ts.
 */
import { createHash } from 'node:crypto'
import type { components } from '../../spec/index.js'
import type { Deps } from '../deps.js'
import {
  observe,
  transition,
  type PreparationError,
  type PreparationState,
} from '../domain/preparation.js'
import {
  getPreparation,
  getWork,
  savePreparationState,
  type PreparationRecord,
} from '../store/works.js'
import { iso } from '../util/iso.js'

/** The candidate setup's digest: a function of the work, its revision and how often the candidate changed. */
export const packageDigest = (workId: string, revision: number, change: number): string =>
  createHash('sha256').update(`${workId}:${revision}:${change}`).digest('hex')

/** The Preparation record (assumed shape; spec Preparation): open questions only, answers so far. */
export function preparationView(
  p: PreparationRecord,
  s: PreparationState,
): components['schemas']['Preparation'] {
  return {
    id: p.id,
    work_id: p.work_id,
    revision: s.revision,
    status: s.status,
    questions: s.questions
      .filter((q) => q.open)
      .map(({ open: _, ...q }) =>
        q.kind === 'SCOPE_CONFIRMATION' ? { ...q, package_digest: s.package_digest } : q,
      ),
    answers: s.answers.map((a) => ({ ...a, answered_at: iso(a.answered_at) })),
    package_digest: s.package_digest,
    reason_codes: s.reason_codes,
    deadline: iso(s.deadline_at),
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  }
}

/** Control API: the candidate setup changes (rehearse PACKAGE_CHANGED); undefined for an unknown id. */
export function changeCandidatePackage(
  deps: Deps,
  id: string,
): { ok: true; preparation: unknown } | { ok: false; error: PreparationError } | undefined {
  const p = getPreparation(deps.db, id)
  if (!p) return undefined
  const nowMs = deps.clock.nowMs()
  const s = observe(p.state, nowMs)
  const work = getWork(deps.db, p.work_id)!
  const change = s.revision + 1
  const t = transition(s, {
    type: 'package_changed',
    at: nowMs,
    digest: packageDigest(work.id, work.revision, change),
  })
  if (!t.ok) return t
  savePreparationState(deps.db, p.id, t.state)
  return { ok: true, preparation: preparationView(p, t.state) }
}
