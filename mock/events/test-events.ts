/**
 * Test helper for the webhook tests: the management API of a fixture Project (its owner token), and a
 * Session outcome event appended straight to the log (what a Turn's end would write), which webhook
 * deliveries then carry.
 */
import { appendEvent } from './log.js'
import type { Mock } from '../index.js'

/** The first approved fixture Project and a caller of its management paths. */
export function managedProject(mock: Mock) {
  const project = mock.fixtures().projects.find((p) => p.approved)!
  const manage = (method: string, path: string, body?: unknown) =>
    mock.app.request(`/api/runtime/projects/${project.id}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${project.owner_token}`,
        'Content-Type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  return { project, manage }
}

/** Appends a Turn outcome event (turn.completed or turn.failed) of a fixed Session of the Project. */
export function appendTurnOutcome(mock: Mock, projectId: string, status: 'SUCCEEDED' | 'FAILED') {
  mock.deps.db.tx(() =>
    appendEvent(mock.deps, {
      aggregate_kind: 'SESSION',
      aggregate_id: '11111111-1111-4111-8111-111111111111',
      project_id: projectId,
      session_id: '11111111-1111-4111-8111-111111111111',
      turn_id: '22222222-2222-4222-8222-222222222222',
      type: status === 'SUCCEEDED' ? 'turn.completed' : 'turn.failed',
      status,
      data: {
        kind: 'OUTCOME',
        status,
        error: null,
        item_ids: [],
        usage: { status: 'FINAL', total_su: 0 },
      },
    }),
  )
}
