/**
 * Works and preparations: prepared statements and row <-> domain mapping. A preparation's state is one JSON
 * document (mock/domain/preparation.ts); lists page by (project_id, seq).
 */
import type { PreparationState } from '../domain/preparation.js'
import type { Db } from './db.js'

export type WorkRecord = {
  id: string
  project_id: string
  title_key: string
  title: string
  description: string
  checklist: string[] | null
  revision: number
  latest_preparation_id: string
  created_at: number
  updated_at: number
}

export type PreparationRecord = {
  id: string
  seq: number
  project_id: string
  work_id: string
  state: PreparationState
}

type WorkRow = Omit<WorkRecord, 'checklist'> & { checklist_json: string | null }
type PreparationRow = Omit<PreparationRecord, 'state'> & { state_json: string; ready_at: number }

const toWork = ({ checklist_json, ...r }: WorkRow): WorkRecord => ({
  ...r,
  checklist: checklist_json === null ? null : (JSON.parse(checklist_json) as string[]),
})
const toPreparation = ({ state_json, ready_at: _, ...r }: PreparationRow): PreparationRecord => ({
  ...r,
  state: JSON.parse(state_json) as PreparationState,
})

export function getWorkByKey(db: Db, projectId: string, titleKey: string): WorkRecord | undefined {
  const row = db
    .stmt('SELECT * FROM works WHERE project_id = ? AND title_key = ?')
    .get(projectId, titleKey) as WorkRow | undefined
  return row && toWork(row)
}

export function getWork(db: Db, id: string): WorkRecord | undefined {
  const row = db.stmt('SELECT * FROM works WHERE id = ?').get(id) as WorkRow | undefined
  return row && toWork(row)
}

/** Inserts or replaces a work (its revision, description and latest preparation change together). */
export function saveWork(db: Db, w: WorkRecord): void {
  db.stmt(
    `INSERT INTO works (id, project_id, title_key, title, description, checklist_json, revision, latest_preparation_id, created_at, updated_at)
     VALUES (@id, @project_id, @title_key, @title, @description, @checklist_json, @revision, @latest_preparation_id, @created_at, @updated_at)
     ON CONFLICT (id) DO UPDATE SET title = excluded.title, description = excluded.description,
       checklist_json = excluded.checklist_json, revision = excluded.revision,
       latest_preparation_id = excluded.latest_preparation_id, updated_at = excluded.updated_at`,
  ).run({
    id: w.id,
    project_id: w.project_id,
    title_key: w.title_key,
    title: w.title,
    description: w.description,
    checklist_json: w.checklist === null ? null : JSON.stringify(w.checklist),
    revision: w.revision,
    latest_preparation_id: w.latest_preparation_id,
    created_at: w.created_at,
    updated_at: w.updated_at,
  })
}

export function insertPreparation(db: Db, p: Omit<PreparationRecord, 'seq'>): PreparationRecord {
  const seq = (
    db.stmt('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM preparations').get() as { n: number }
  ).n
  db.stmt(
    'INSERT INTO preparations (id, seq, project_id, work_id, ready_at, state_json) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(p.id, seq, p.project_id, p.work_id, p.state.ready_at, JSON.stringify(p.state))
  return { ...p, seq }
}

export function getPreparation(db: Db, id: string): PreparationRecord | undefined {
  const row = db.stmt('SELECT * FROM preparations WHERE id = ?').get(id) as
    PreparationRow | undefined
  return row && toPreparation(row)
}

export function savePreparationState(db: Db, id: string, state: PreparationState): void {
  db.stmt('UPDATE preparations SET state_json = ? WHERE id = ?').run(JSON.stringify(state), id)
}

/** A page of a Project's preparations in creation order, after a seq. */
export function listPreparationsPage(
  db: Db,
  projectId: string,
  afterSeq: number,
  limit: number,
): PreparationRecord[] {
  return (
    db
      .stmt(
        'SELECT * FROM preparations WHERE project_id = ? AND seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)',
      )
      .all(projectId, afterSeq, limit) as PreparationRow[]
  ).map(toPreparation)
}

/** Preparations of a Project that left PREPARING by nowMs (settled) and that have not (reserved). */
export function countPreparationsByReadiness(
  db: Db,
  projectId: string,
  nowMs: number,
): { ready: number; preparing: number } {
  return db
    .stmt(
      `SELECT COALESCE(SUM(ready_at <= @now), 0) AS ready, COALESCE(SUM(ready_at > @now), 0) AS preparing
       FROM preparations WHERE project_id = @project`,
    )
    .get({ now: nowMs, project: projectId }) as { ready: number; preparing: number }
}
