import { describe, expect, it } from 'vitest'
import { startedByNpm, watchParent } from './parent-watch.js'

describe('parent watch (issue #14: kill <npx pid> must stop the server)', () => {
  it('calls onGone once, after the parent process changed, and not before', async () => {
    let ppid = 100
    let gone = 0
    watchParent(
      () => (gone += 1),
      () => ppid,
      5,
    )
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(gone).toBe(0)
    ppid = 1
    await expect.poll(() => gone).toBe(1)
    ppid = 2
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(gone).toBe(1)
  })

  it('notices a parent gone before the watch began, given the parent the process started with', async () => {
    // The server writes "listening on" before it begins watching: a client reading that line may stop npm at
    // once, and the server then found itself already re-parented and watched its new parent for ever.
    let gone = 0
    watchParent(
      () => (gone += 1),
      () => 1,
      5,
      100,
    )
    await expect.poll(() => gone).toBe(1)
  })

  it('stops watching when told', async () => {
    let ppid = 100
    let gone = 0
    const stop = watchParent(
      () => (gone += 1),
      () => ppid,
      5,
    )
    stop()
    ppid = 1
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(gone).toBe(0)
  })

  it('watches only a process npm started', () => {
    expect(startedByNpm({ npm_command: 'exec' })).toBe(true)
    expect(startedByNpm({ npm_lifecycle_event: 'start' })).toBe(true)
    expect(startedByNpm({})).toBe(false)
  })
})
