/**
 * The target lifecycle of a test file in one call:
 *
 *   const target = useTarget()                                        // most files
 *   const target = useTarget({ allowInsecureWebhooks: true })         // options as for startTarget
 *   const target = useTarget({ rateLimits: false, freshEach: false }) // the test resets the world itself
 *
 * registers beforeAll (start or connect), afterAll (close) and, unless freshEach is false, beforeEach
 * (target.fresh(): a fresh world for every test), and returns a stand-in for the Target that forwards every
 * property to the started one. Call it at the top of the file, before the file's own hooks: hooks run in the
 * order they are registered, and after-hooks in reverse, so the file's afterAll hooks run before the close.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { unexpectedFindings, type ClientFinding } from './probes.js'
import { startTarget, type Target, type TargetOptions } from './target.js'

export type UseTargetOptions = TargetOptions & {
  /** Call target.fresh() before each test (default true). */
  freshEach?: boolean
}

export function useTarget(options: UseTargetOptions = {}): Target {
  const { freshEach = true, ...targetOptions } = options
  let current: Target | undefined
  const started = (): Target => {
    if (!current) {
      throw new Error(
        'the target is not started: use it inside tests and hooks (useTarget starts it in beforeAll)',
      )
    }
    return current
  }
  beforeAll(async () => {
    current = await startTarget(targetOptions)
  })
  afterAll(async () => {
    const closing = current
    current = undefined
    await closing?.close()
  })
  // The mock's client referee judges the suite's own requests (support/probes.ts): each test carries its
  // findings, and one that breaks an enforced retry rule without declaring it fails.
  afterEach(async ({ task }) => {
    if (!current?.control) return
    const res = await current.api.get('/_mock/referee', { check: false })
    const findings = (res.body as { violations?: ClientFinding[] } | undefined)?.violations ?? []
    if (findings.length === 0) return
    task.meta.clientViolations = findings.map((f) => ({
      rule: f.rule,
      requirement_id: f.requirement_id,
    }))
    await current.api.delete('/_mock/referee', undefined, { check: false })
    const unexpected = unexpectedFindings(findings, task.meta.probes)
    if (unexpected.length > 0 && task.result?.state !== 'fail')
      throw new Error(
        `the suite broke a client rule (the mock's referee): ${unexpected.map((f) => `${f.rule} (${f.requirement_id})`).join(', ')}; declare a deliberate probe with probesClientRule`,
      )
  })
  if (freshEach) {
    beforeEach(async () => {
      await started().fresh()
    })
  }
  return new Proxy({} as Target, {
    get: (_, key) => Reflect.get(started(), key) as unknown,
    has: (_, key) => Reflect.has(started(), key),
    ownKeys: () => Reflect.ownKeys(started()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(started(), key)
      return d && { ...d, configurable: true }
    },
    set: () => {
      throw new Error('the target of useTarget is read-only')
    },
  })
}
