/**
 * A typed client of the mock's control API (/_mock, MOCK-CONTRACT): reset, clock, advance, scenarios, and the
 * extensions for balance, storage limit and artifacts. It exists
 * only on a mock target; tests that need it are skipped on a real deployment (capabilities.virtualTime).
 */
import { expect } from 'vitest'
import type { ApiClient } from './client.js'
import type { FixturesBody } from './world.js'

/** A mock started with --control-token needs it on every control call (MOCK_CONTROL_TOKEN). */
const CONTROL_HEADERS: Record<string, string> = process.env.MOCK_CONTROL_TOKEN
  ? { Authorization: `Bearer ${process.env.MOCK_CONTROL_TOKEN}` }
  : {}

export class MockControl {
  constructor(private readonly api: ApiClient) {}

  private async call<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    status = 200,
  ): Promise<T> {
    const res = await this.api.send(method, path, body, { check: false, headers: CONTROL_HEADERS })
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
  reset = () => this.call<{ now: string; mode?: 'manual' | 'realtime' }>('POST', '/_mock/reset')
  /**
   * The mock's switchable settings (call-rate limits, loopback webhook endpoints); undefined for a mock that
   * predates them (404).
   */
  settings = async (): Promise<MockSettings | undefined> => {
    const res = await this.api.send('GET', '/_mock/settings', undefined, {
      check: false,
      headers: CONTROL_HEADERS,
    })
    return res.status === 200 ? (res.body as MockSettings) : undefined
  }
  /** Switches settings until the next reset (which brings back the mock's start flags). */
  setSettings = (patch: Partial<MockSettings>) =>
    this.call<MockSettings>('POST', '/_mock/settings', patch)
  /** Queues a scenario (a name, or an inline script) for the next `times` executions of a Deployment or Workflow. */
  queueScenario = (target_id: string, scenario: string | Record<string, unknown>, times?: number) =>
    this.call<unknown>(
      'POST',
      '/_mock/scenarios',
      times === undefined ? { target_id, scenario } : { target_id, scenario, times },
      201,
    )
  /** Extension: revokes a key; its running executions end CANCELED with AUTHORIZATION_REVOKED. */
  revokeKey = (key: string) =>
    this.call<{ key: string; revoked: true; canceled: string[] }>(
      'POST',
      `/_mock/keys/${key}/revoke`,
    )
  /** Extension: expires a key now, or at a later virtual time. */
  expireKey = (key: string, at?: string) =>
    this.call<{ key: string; expires_at: string; canceled: string[] }>(
      'POST',
      `/_mock/keys/${key}/expire`,
      at === undefined ? {} : { at },
    )
  /** Extension: retires a Deployment; its running executions end with AUTHORIZATION_REVOKED. */
  retireDeployment = (id: string) =>
    this.call<{ id: string; status: 'RETIRED'; canceled: string[] }>(
      'POST',
      `/_mock/deployments/${id}/retire`,
    )
  /** Extension: the internal Sessions held by a Run's workflow steps. */
  /** Extension: replaces a key's scopes; open executions that needed a withdrawn scope are canceled. */
  setKeyScopes = (key: string, scopes: string[]) =>
    this.call<{ key: string; scopes: string[]; canceled: string[] }>(
      'POST',
      `/_mock/keys/${key}/scopes`,
      { scopes },
    )
  /** Extension: replaces a key's allowed Deployments; its open Turns of a removed one are canceled. */
  setKeyDeployments = (key: string, deployment_ids: string[]) =>
    this.call<{ key: string; deployment_ids: string[]; canceled: string[] }>(
      'POST',
      `/_mock/keys/${key}/deployments`,
      { deployment_ids },
    )
  runSessions = (runId: string) =>
    this.call<{ run_id: string; session_ids: string[] }>('GET', `/_mock/runs/${runId}/sessions`)
  /** Extension: sets a Project's SU balance (rehearse 402 MINIMUM_SU_REQUIRED). */
  setBalance = (projectId: string, su_balance: number) =>
    this.call<{ project_id: string; su_balance: number }>(
      'POST',
      `/_mock/projects/${projectId}/balance`,
      { su_balance },
    )
  /** Extension: sets a Project's file storage limit in bytes (rehearse 413 PROJECT_STORAGE_LIMIT). */
  setStorageLimit = (projectId: string, storage_limit_bytes: number) =>
    this.call<{ project_id: string; storage_limit_bytes: number }>(
      'POST',
      `/_mock/projects/${projectId}/storage-limit`,
      { storage_limit_bytes },
    )
  /** Extension: stores a result file as if an execution had produced it. */
  createArtifact = (a: {
    project_id: string
    deployment_id?: string
    session_id?: string
    filename: string
    mime_type: string
    content: Buffer | string
    retention_seconds?: number
  }) => {
    const { content, ...rest } = a
    return this.call<ArtifactCreated>(
      'POST',
      '/_mock/artifacts',
      { ...rest, content_base64: Buffer.from(content).toString('base64') },
      201,
    )
  }
  /** Fault rules (MOCK-CONTRACT): adds one; the rule as the mock lists it. */
  addFault = (rule: FaultRuleBody) => this.call<FaultRuleView>('POST', '/_mock/faults', rule, 201)
  /** Fault rules with their fired counts. */
  faults = () => this.call<{ items: FaultRuleView[] }>('GET', '/_mock/faults')
  /** Removes every fault rule. */
  clearFaults = () => this.call<{ items: [] }>('DELETE', '/_mock/faults')
  /**
   * Extension: changes a workflow's organization data (the grant declared at publication, what its steps use,
   * whether the data store that checks Run input is reachable); fields given replace the current ones.
   */
  setOrganizationData = (
    workflowId: string,
    patch: { grant?: string[]; uses?: string[]; source_reachable?: boolean },
  ) =>
    this.call<{ id: string; organization_data: Record<string, unknown> }>(
      'POST',
      `/_mock/workflows/${workflowId}/organization-data`,
      patch,
    )
  /** Extension: the Project's balance and its UTC day and month budget windows. */
  budget = (projectId: string) =>
    this.call<{ su_balance: number; daily: { reserved_su: number; settled_su: number } }>(
      'GET',
      `/_mock/projects/${projectId}/budget`,
    )
  /** Extension: deletes an artifact (as a Session or Run deletion would). */
  deleteArtifact = (artifactId: string) =>
    this.call<{ artifact_id: string; deleted: true }>('DELETE', `/_mock/artifacts/${artifactId}`)
}

/** GET /_mock/settings: what a test may switch until the next reset. */
export type MockSettings = { rate_limits: boolean; allow_insecure_webhooks: boolean }

/** POST /_mock/artifacts: the new artifact's id and its ArtifactDetail fields. */
export type ArtifactCreated = {
  artifact_id: string
  id: string
  file_id: string
  filename: string
  mime_type: string
  size_bytes: number
  sha256: string
  expires_at: string
}

/** POST /_mock/faults: `{match, action, times?, probability?, seed?}` (README "Fault rules"). */
export type FaultRuleBody = {
  match: {
    method?: string
    path?: string
    operation?: string
    key?: string
    event_type?: string
  }
  action: Record<string, unknown>
  times?: number
  probability?: number
  seed?: string
}

/** A fault rule as GET /_mock/faults lists it. */
export type FaultRuleView = FaultRuleBody & {
  id: string
  times: number | null
  remaining: number | null
  matched: number
  fired: number
}
