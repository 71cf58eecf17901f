/**
 * A typed client of the mock's control API (/_mock, MOCK-CONTRACT): reset, clock, advance, scenarios. It exists
 * only on a mock target; tests that need it are skipped on a real deployment (capabilities.virtualTime).
 */
import { expect } from 'vitest'
import type { ApiClient } from './client.js'
import type { FixturesBody } from './world.js'

export class MockControl {
  constructor(private readonly api: ApiClient) {}

  private async call<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    status = 200,
  ): Promise<T> {
    const res = await this.api.send(method, path, body, { check: false })
    expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBe(status)
    return res.body as T
  }

  fixtures = () => this.call<FixturesBody>('GET', '/_mock/fixtures')
  clock = () => this.call<{ now: string; mode: string }>('GET', '/_mock/clock')
  setMode = (mode: 'manual' | 'realtime') =>
    this.call<{ now: string; mode: string }>('POST', '/_mock/clock', { mode })
  /** Moves virtual time forward; resolves once every due timer has fired. */
  advance = (seconds: number) =>
    this.call<{ now: string }>('POST', '/_mock/clock/advance', { seconds })
  reset = () => this.call<{ now: string }>('POST', '/_mock/reset')
  /** Queues a scenario for the next `times` executions of a Deployment or Workflow. */
  queueScenario = (target_id: string, scenario: string, times?: number) =>
    this.call<unknown>(
      'POST',
      '/_mock/scenarios',
      times === undefined ? { target_id, scenario } : { target_id, scenario, times },
      201,
    )
}
