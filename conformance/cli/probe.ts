/**
 * The target is checked once before any test runs, so a wrong URL or key gives one root-cause line instead of
 * a failure per test: is it reachable, does it have the mock's control API (then the world comes from its
 * fixtures), is the API key accepted, and (real target) the world built from the flags and the API.
 */
import { readFileSync } from 'node:fs'
import type { Ledger } from '../support/pace.js'
import { discoverWorld, WorldError, type Getter, type World } from '../support/world.js'
import type { CliOptions } from './args.js'

/** The target cannot be used: the message is the one line the CLI prints before exiting 2. */
export class TargetError extends Error {}

export type ProbeInput = { baseUrl: string } & Pick<
  CliOptions,
  'apiKey' | 'deployment' | 'workflow' | 'ownerToken' | 'world' | 'controlToken'
>

export type Probed =
  | { kind: 'mock-http'; /** The clock was realtime and is now manual. */ clockSet: boolean }
  | { kind: 'real'; world: World }

type Answer = { status: number; body: unknown }

const TIMEOUT_MS = 20_000

/** One GET, its JSON body if any; network failures become a TargetError naming the cause. */
async function get(url: string, headers: Record<string, string>): Promise<Answer> {
  let res: Response
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) })
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    const why =
      cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
    throw new TargetError(`cannot reach ${new URL(url).origin}: ${why}`)
  }
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body }
}

const errorOf = (a: Answer): string => {
  const e = (a.body as { error?: { code?: string; message?: string } } | null)?.error
  return e?.code ? `${a.status} ${e.code}${e.message ? ` (${e.message})` : ''}` : String(a.status)
}

/**
 * The suite drives a mock's time itself (it advances the virtual clock and resets the world before each test):
 * a mock started with a realtime clock (`npm start` without --clock manual) is switched to manual, as the
 * in-process mock runs. A reset goes back to the mode the mock started in: the suite sets manual again after
 * each one (support/target.ts).
 */
async function manualClock(base: string, controlToken: string | undefined): Promise<boolean> {
  const headers: Record<string, string> = controlToken
    ? { Authorization: `Bearer ${controlToken}` }
    : {}
  const clock = await get(`${base}/_mock/clock`, headers)
  if ((clock.body as { mode?: string } | null)?.mode !== 'realtime') return false
  const res = await fetch(`${base}/_mock/clock`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode: 'manual' }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  })
  if (!res.ok) throw new TargetError(`cannot set the mock's clock to manual: ${res.status}`)
  return true
}

/** Checks the target and returns its kind and, for a real target, the world of the run. */
export async function probeTarget(input: ProbeInput, ledger: Ledger): Promise<Probed> {
  const base = input.baseUrl
  const fixtures = await get(
    `${base}/_mock/fixtures`,
    input.controlToken ? { Authorization: `Bearer ${input.controlToken}` } : {},
  )
  const isMock =
    fixtures.status === 200 &&
    Array.isArray((fixtures.body as { projects?: unknown } | null)?.projects)

  const keyed: Getter = async (path, key) => {
    const wait = await ledger.slot('read', true)
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    return get(`${base}${path}`, { Authorization: `Bearer ${key}` })
  }

  if (input.apiKey !== undefined) {
    const listed = await keyed('/v1/deployments', input.apiKey)
    if (listed.status === 401)
      throw new TargetError(
        `the API key was refused: GET /v1/deployments answered ${errorOf(listed)}`,
      )
    if (listed.status >= 500)
      throw new TargetError(`${base} fails: GET /v1/deployments answered ${errorOf(listed)}`)
    if (listed.status === 404 && !(listed.body as { error?: unknown } | null)?.error)
      throw new TargetError(`${base} does not look like the service: GET /v1/deployments is 404`)
  }
  if (isMock) return { kind: 'mock-http', clockSet: await manualClock(base, input.controlToken) }
  if (fixtures.status === 401 && input.controlToken)
    throw new TargetError(`the control token was refused: GET /_mock/fixtures answered 401`)
  if (input.apiKey === undefined)
    throw new TargetError(
      `${base} has no control API (GET /_mock/fixtures answered ${fixtures.status}): a real target needs --api-key`,
    )

  let fileWorld: Partial<World> | undefined
  if (input.world) {
    try {
      fileWorld = JSON.parse(readFileSync(input.world, 'utf8')) as Partial<World>
    } catch (error) {
      throw new TargetError(
        `--world ${input.world}: ${error instanceof Error ? error.message : String(error)}`,
      )
    }
  }
  try {
    const world = await discoverWorld(keyed, {
      apiKey: input.apiKey,
      ...(input.deployment ? { deployment: input.deployment } : {}),
      ...(input.workflow ? { workflow: input.workflow } : {}),
      ...(input.ownerToken ? { ownerToken: input.ownerToken } : {}),
      ...(fileWorld ? { base: fileWorld } : {}),
    })
    return { kind: 'real', world }
  } catch (error) {
    if (error instanceof WorldError) throw new TargetError(error.message)
    throw error
  }
}
