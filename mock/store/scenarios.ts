/**
 * Fixture scenarios and the scenario queue: which scripted behaviour the next executions of a Deployment
 * or Workflow follow (POST /_mock/scenarios). The queue is taken first in, first out per target.
 */
import type { ScenarioDefinition } from '../execution/scenarios.js'
import type { Db } from './db.js'

export type QueuedScenario = { seq: number; target_id: string; scenario: string; remaining: number }

export function insertFixtureScenario(
  db: Db,
  name: string,
  def: ScenarioDefinition,
  position: number,
): void {
  db.stmt('INSERT INTO fixture_scenarios (name, position, definition_json) VALUES (?, ?, ?)').run(
    name,
    position,
    JSON.stringify(def),
  )
}

/** The position after every stored fixture scenario (an inline scenario goes last). */
export function nextFixtureScenarioPosition(db: Db): number {
  const row = db.stmt('SELECT MAX(position) AS last FROM fixture_scenarios').get() as {
    last: number | null
  }
  return (row.last ?? -1) + 1
}

export function getFixtureScenario(db: Db, name: string): ScenarioDefinition | undefined {
  const row = db.stmt('SELECT definition_json FROM fixture_scenarios WHERE name = ?').get(name) as
    { definition_json: string } | undefined
  return row && (JSON.parse(row.definition_json) as ScenarioDefinition)
}

export function listFixtureScenarios(db: Db): ScenarioDefinition[] {
  return (
    db.stmt('SELECT definition_json FROM fixture_scenarios ORDER BY position').all() as {
      definition_json: string
    }[]
  ).map((r) => JSON.parse(r.definition_json) as ScenarioDefinition)
}

/** Queues `times` executions of a scenario for a target, after anything already queued for it. */
export function enqueueScenario(
  db: Db,
  targetId: string,
  scenario: string,
  times: number,
): QueuedScenario {
  const info = db
    .stmt('INSERT INTO scenario_queue (target_id, scenario, remaining) VALUES (?, ?, ?)')
    .run(targetId, scenario, times)
  return { seq: Number(info.lastInsertRowid), target_id: targetId, scenario, remaining: times }
}

/**
 * Takes the scenario for the next execution of a target (one use), or undefined when nothing is queued. Its one
 * write is a single statement, so it needs no transaction (nor a savepoint inside the acceptance's). The read
 * is kept (Db.cached) until the queue is written: most acceptances find nothing queued, and read nothing.
 */
export function takeScenario(db: Db, targetId: string): string | undefined {
  const row = db
    .cached('SELECT * FROM scenario_queue WHERE target_id = ? ORDER BY seq LIMIT 1')
    .get(targetId) as QueuedScenario | undefined
  if (!row) return undefined
  if (row.remaining > 1) {
    db.stmt('UPDATE scenario_queue SET remaining = remaining - 1 WHERE seq = ?').run(row.seq)
  } else {
    db.stmt('DELETE FROM scenario_queue WHERE seq = ?').run(row.seq)
  }
  return row.scenario
}

/** The whole queue in order (control API). */
export function listScenarioQueue(db: Db): QueuedScenario[] {
  return db.stmt('SELECT * FROM scenario_queue ORDER BY seq').all() as QueuedScenario[]
}
