/**
 * A FILE output of the target's own making (Output items: FILE; Files and artifacts), for the artifact and
 * download checks on every target:
 *
 *   const fileOutput = fileOutputs(target)          // once per test file, after useTarget()
 *   const out = await fileOutput(ctx)               // in a test: the FILE output item and its Turn
 *
 * On a mock the `file-output` scenario is queued on the Deployment through the control API first (the world's
 * fileOutput Deployment if it names one, else the active one, or the one asked for), and every call makes a new
 * execution: virtual time makes it cheap, and each test starts from a fresh world (target.fresh()). On a real
 * target the world's `deployments.fileOutput` (a Deployment whose executions produce a FILE output; world file
 * key, CLI flag --file-deployment) is run once per test file: the first call creates the Session (through the
 * run's pacer and spending budget), polls the Turn until it ends and keeps the answer; every later check of the
 * file reads the same artifact (one execution serves many checks). A check that destroys its artifact (a
 * deletion) asks for a `fresh` one: a new execution, kept by no one. Without that role the test is skipped.
 */
import type { TestContext } from 'vitest'
import { expect } from 'vitest'
import { waitUntilEnded } from './poll.js'
import { createSession, type SessionReceipt } from './session-create.js'
import { role } from './skip.js'
import type { Target } from './target.js'

/** A FILE output item (Output items): every field the document requires of it. */
export type FileOutputItem = {
  id: string
  key: string
  type: 'FILE'
  visibility: string
  availability: string
  error: unknown
  artifact_id: string
  filename: string
  mime_type: string
  size_bytes: number
  sha256: string
}

export type FileOutput = {
  /** The FILE output item of the Turn detail. */
  item: FileOutputItem
  receipt: SessionReceipt
  deploymentId: string
}

export type FileOutputOptions = {
  /** A mock: the Deployment to run (default the world's fileOutput, else active); a real target has one. */
  deploymentId?: string
  /** A new execution whose output no other check shares (for a check that deletes it). */
  fresh?: boolean
}

/** The role's name in skip reasons (the world file's key). */
export const FILE_OUTPUT_ROLE =
  'Deployment whose executions produce a FILE output (deployments.fileOutput)'

/** What one execution gave: kept per Deployment on a real target, its failure or skip included. */
type Outcome = { ok: FileOutput } | { skip: string } | { error: Error }

const isSkip = (e: unknown): e is { note?: string; message: string } =>
  (e as { code?: string } | null)?.code === 'VITEST_PENDING'

export function fileOutputs(
  target: Target,
): (ctx: TestContext, opts?: FileOutputOptions) => Promise<FileOutput> {
  const kept = new Map<string, Promise<Outcome>>()
  return async (ctx: TestContext, opts: FileOutputOptions = {}) => {
    if (target.control) {
      const deploymentId =
        opts.deploymentId ?? target.world.deployments.fileOutput ?? target.world.deployments.active
      await target.control.queueScenario(deploymentId, 'file-output')
      return produce(target, deploymentId)
    }
    const deploymentId = role(ctx, target.world.deployments.fileOutput, FILE_OUTPUT_ROLE)
    if (opts.deploymentId !== undefined && opts.deploymentId !== deploymentId)
      ctx.skip(`needs a FILE output of another Deployment than the world's ${FILE_OUTPUT_ROLE}`)
    if (opts.fresh) return produce(target, deploymentId)
    let outcome = kept.get(deploymentId)
    if (!outcome) {
      outcome = produce(target, deploymentId).then(
        (ok): Outcome => ({ ok }),
        (e: unknown): Outcome =>
          isSkip(e)
            ? { skip: e.note ?? e.message }
            : { error: e instanceof Error ? e : new Error(String(e)) },
      )
      kept.set(deploymentId, outcome)
    }
    const o = await outcome
    if ('skip' in o) ctx.skip(o.skip)
    if ('error' in o)
      throw new Error(
        `the execution that was to produce this file's FILE output failed: ${o.error.message}`,
      )
    return o.ok
  }
}

/** Creates a Session on the Deployment, waits until its Turn ends and returns its FILE output item. */
async function produce(target: Target, deploymentId: string): Promise<FileOutput> {
  const res = await createSession(
    target,
    { input: [{ type: 'TEXT', text: 'Write a short report and return it as a file.' }] },
    { deploymentId },
  )
  expect(res.status, res.text.slice(0, 300)).toBe(202)
  const receipt = res.body as SessionReceipt
  const status = await waitUntilEnded(target, receipt.status_url, { mockAdvanceS: 10 })
  const turn = await target.api.get(receipt.status_url, { key: target.world.keys.full })
  expect(status, turn.text.slice(0, 500)).toBe('SUCCEEDED')
  const outputs = (turn.body as { outputs?: { type?: string; visibility?: string }[] }).outputs
  const files = (outputs ?? []).filter((o) => o.type === 'FILE')
  const item = files.find((o) => o.visibility === 'FINAL') ?? files[0]
  expect(
    item,
    `the Turn of Deployment ${deploymentId} ended without a FILE output: ${turn.text.slice(0, 500)}`,
  ).toBeDefined()
  return { item: item as FileOutputItem, receipt, deploymentId }
}
