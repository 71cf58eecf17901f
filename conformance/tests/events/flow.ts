/**
 * Steps the events tests share: create a Session (or add a Turn, or start a Run) with a fresh Idempotency-Key,
 * sending again after Retry-After when the Accept call rate answers 429 (the call rate has its own tests).
 */
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { waitUntilEnded } from '../../support/poll.js'
import type { Target } from '../../support/target.js'

export type Receipt = {
  session_id: string
  turn_id: string
  events_url: string
  status_url: string
}

/** Sends, and on 429 waits Retry-After (virtual time on the mock) and sends again, a few times. */
export async function unthrottled(
  target: Target,
  send: () => Promise<ApiResponse>,
): Promise<ApiResponse> {
  let res = await send()
  for (let i = 0; i < 3 && res.status === 429; i++) {
    const seconds = Math.max(1, Number(res.headers['retry-after'] ?? 1))
    if (target.control) await target.control.advance(seconds)
    else await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    res = await send()
  }
  return res
}

/** A new Session (and its first Turn) on the world's first ACTIVE Deployment. */
export async function newSession(
  target: Target,
  text = 'Summarize the attached notes.',
  key = target.world.keys.full,
  deploymentId = target.world.deployments.active,
): Promise<Receipt> {
  const res = await unthrottled(target, () =>
    target.api.post(
      `/v1/deployments/${deploymentId}/sessions`,
      { input: [{ type: 'TEXT', text }] },
      { key, idem: `events-${randomUUID()}` },
    ),
  )
  expect(res.status, res.text).toBe(202)
  return res.body as Receipt
}

/** A new Turn in an existing Session (the Session must be idle). */
export async function addTurn(
  target: Target,
  sessionId: string,
  text = 'And one more thing.',
): Promise<Receipt> {
  const res = await unthrottled(target, () =>
    target.api.post(
      `/v1/sessions/${sessionId}/turns`,
      { input: [{ type: 'TEXT', text }] },
      { key: target.world.keys.full, idem: `events-${randomUUID()}` },
    ),
  )
  expect(res.status, res.text).toBe(202)
  return res.body as Receipt
}

/** Reads a Turn detail with the full key. */
export async function readTurn(
  target: Target,
  sessionId: string,
  turnId: string,
): Promise<{ status: string }> {
  const res = await unthrottled(target, () =>
    target.api.get(`/v1/sessions/${sessionId}/turns/${turnId}`, { key: target.world.keys.full }),
  )
  expect(res.status, res.text).toBe(200)
  return res.body as { status: string }
}

/** Starts a Run of a Workflow with a minimal valid input. */
export async function newRun(target: Target, workflowId: string): Promise<{ run_id: string }> {
  const wf = await unthrottled(target, () =>
    target.api.get(`/v1/workflows/${workflowId}`, { key: target.world.keys.full }),
  )
  expect(wf.status, wf.text).toBe(200)
  const { published_version } = wf.body as { published_version: number }
  const res = await unthrottled(target, () =>
    target.api.post(
      `/v1/workflows/${workflowId}/runs`,
      { published_version, input: { topic: 'events' } },
      { key: target.world.keys.full, idem: `events-${randomUUID()}` },
    ),
  )
  expect(res.status, res.text).toBe(202)
  return res.body as { run_id: string }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const DAY_S = 24 * 60 * 60

/**
 * A Session whose first Turn has ended. On a mock the default `succeed` script runs on virtual time (RUNNING
 * 1 s, TEXT output 4 s, SUCCEEDED 5 s); on a real target the Turn is polled until it ends (support/poll.ts).
 * Its stored events then replay in full, whatever the target's timing.
 */
export async function endedSession(target: Target): Promise<Receipt & { status: string }> {
  const receipt = await newSession(target)
  return {
    ...receipt,
    status: await waitUntilEnded(target, receipt.status_url, { mockAdvanceS: 6 }),
  }
}

/** The event type that ends a Turn's replay: the document names turn.completed and turn.failed only. */
export const endEventType = (status: string): string | undefined =>
  ({ SUCCEEDED: 'turn.completed', FAILED: 'turn.failed' })[status]
