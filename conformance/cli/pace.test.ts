/** The run's ledger and pacer (conformance/support/pace.ts): call windows, 429 resends, spending. */
import { describe, expect, it } from 'vitest'
import type { ApiResponse } from '../support/client.js'
import {
  callClass,
  ledgerFromEnv,
  parseCallRates,
  RunLedger,
  RunPacer,
  spendKind,
  suCap,
} from '../support/pace.js'
import { startCoordinator } from './coordinator.js'
import { RemoteLedger } from '../support/pace.js'

const response = (status: number, headers: Record<string, string> = {}): ApiResponse => ({
  status,
  headers,
  body: {},
  text: '',
})

describe('call classes and spending kinds', () => {
  it('puts creations and uploads in the Accept class, everything else in Read', () => {
    expect(callClass('POST', '/v1/deployments/d/sessions')).toBe('accept')
    expect(callClass('POST', '/v1/sessions/s/turns')).toBe('accept')
    expect(callClass('POST', '/v1/workflows/w/runs?x=1')).toBe('accept')
    expect(callClass('POST', '/v1/files')).toBe('accept')
    expect(callClass('POST', '/v1/runs/r/cancel')).toBe('read')
    expect(callClass('GET', '/v1/deployments/d/sessions')).toBe('read')
    expect(callClass('DELETE', '/v1/sessions/s')).toBe('read')
  })

  it('knows which requests start executions or store files', () => {
    expect(spendKind('POST', '/v1/deployments/d/sessions')).toBe('execution')
    expect(spendKind('POST', '/v1/works')).toBe('execution')
    expect(spendKind('POST', '/v1/sessions/s/files')).toBe('upload')
    expect(spendKind('POST', '/v1/runs/r/cancel')).toBeUndefined()
    expect(spendKind('GET', '/v1/files')).toBeUndefined()
  })

  it("reserves an execution's limits.max_su, else the document's 100 SU", () => {
    expect(suCap({ limits: { max_su: 5 } })).toBe(5)
    expect(suCap('{"limits":{"max_su":2.5}}')).toBe(2.5)
    expect(suCap({ limits: { max_su: 500 } })).toBe(100)
    expect(suCap('not json')).toBe(100)
    expect(suCap(undefined)).toBe(100)
  })
})

describe('ledger', () => {
  it('lets 10 Accept calls through in a window, then spaces them a window apart', () => {
    let now = 0
    const ledger = new RunLedger({ allow: true, maxExecutions: 1 }, () => now, undefined, 60_000)
    const waits = Array.from({ length: 12 }, () => ledger.slotSync('accept', true))
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0))
    expect(waits.slice(10)).toEqual([60_000, 60_000])
    now = 60_000
    expect(ledger.slotSync('accept', true)).toBe(0)
    expect(ledger.slotSync('read', true)).toBe(0)
  })

  it('holds a class back after a 429 for Retry-After', async () => {
    const now = 1000
    const ledger = new RunLedger({ allow: true, maxExecutions: 1 }, () => now)
    await ledger.blocked('read', 30)
    expect(ledger.slotSync('read', true)).toBe(30_000)
    expect(ledger.slotSync('read', false)).toBe(0)
    expect(ledger.statsSync().rateLimited).toBe(1)
  })

  it('refuses spending without --allow-spend', () => {
    const ledger = new RunLedger({ allow: false, maxExecutions: 5 })
    expect(ledger.reserveSync({ kind: 'upload', su: 0 })).toEqual({
      ok: false,
      reason: 'needs --allow-spend',
    })
  })

  it('counts accepted executions up to the bounds; refused or repeated requests cost nothing', () => {
    const ledger = new RunLedger({ allow: true, maxExecutions: 2, maxSu: 150 })
    const a = ledger.reserveSync({ kind: 'execution', su: 100, dedupe: 'k1' })
    expect(a.ok).toBe(true)
    ledger.settleSync(a.ok ? a.id : 0, true)
    // The same Idempotency-Key again starts no execution.
    const again = ledger.reserveSync({ kind: 'execution', su: 100, dedupe: 'k1' })
    expect(again).toMatchObject({ ok: true, counted: false })
    expect(ledger.reserveSync({ kind: 'execution', su: 100 })).toEqual({
      ok: false,
      reason: '--max-su 150 reached',
    })
    const refusedByTarget = ledger.reserveSync({ kind: 'execution', su: 50 })
    ledger.settleSync(refusedByTarget.ok ? refusedByTarget.id : 0, false)
    const b = ledger.reserveSync({ kind: 'execution', su: 50 })
    ledger.settleSync(b.ok ? b.id : 0, true)
    expect(ledger.reserveSync({ kind: 'execution', su: 1 })).toEqual({
      ok: false,
      reason: '--max-executions 2 reached',
    })
    expect(ledger.statsSync()).toMatchObject({ executions: 2, su: 150 })
  })

  it('keeps the call rates TARGET_CALL_RATES gives when the suite runs without the CLI', () => {
    const ledger = ledgerFromEnv({ TARGET_CALL_RATES: 'read=2' }) as RunLedger
    expect(ledger.slotSync('read', true)).toBe(0)
    expect(ledger.slotSync('read', true)).toBe(0)
    expect(ledger.slotSync('read', true)).toBeGreaterThan(0)
    // Accept stays at the document's 10 per minute.
    for (let i = 0; i < 10; i++) expect(ledger.slotSync('accept', true)).toBe(0)
    expect(ledger.slotSync('accept', true)).toBeGreaterThan(0)
    expect(() => parseCallRates('read=0', 'TARGET_CALL_RATES')).toThrow(/positive integer/)
    expect(() => ledgerFromEnv({ TARGET_CALL_RATES: 'reads=5' })).toThrow(/TARGET_CALL_RATES/)
  })

  it('is served to test files over HTTP', async () => {
    const ledger = new RunLedger({ allow: false, maxExecutions: 1 })
    const coordinator = await startCoordinator(ledger)
    try {
      const remote = new RemoteLedger(coordinator.url)
      expect(await remote.slot('read', true)).toBe(0)
      await remote.blocked('accept', 5)
      expect(await remote.reserve({ kind: 'execution', su: 1 })).toMatchObject({ ok: false })
      await remote.proxyResent(502)
      await remote.started({ kind: 'run', runId: 'r1', key: 'k' })
      await remote.started({ kind: 'turn', sessionId: 's1', turnId: 't1' })
      await remote.started({ kind: 'run', runId: 'r1', key: 'k' })
      expect(await remote.stats()).toMatchObject({
        calls: { read: 1 },
        rateLimited: 1,
        proxyResent: 1,
      })
      expect(ledger.startedExecutions()).toEqual([
        { kind: 'run', runId: 'r1', key: 'k' },
        { kind: 'turn', sessionId: 's1', turnId: 't1' },
      ])
    } finally {
      await coordinator.close()
    }
  })
})

describe('pacer', () => {
  it('sends a request again after 429 + Retry-After, then returns the answer', async () => {
    const waited: number[] = []
    const ledger = new RunLedger({ allow: true, maxExecutions: 1 })
    const pacer = new RunPacer(ledger, { spend: false }, async (ms) => {
      waited.push(ms)
    })
    const answers = [response(429, { 'retry-after': '2' }), response(200)]
    let sent = 0
    const res = await pacer.send({ method: 'GET', path: '/v1/deployments' }, async () => {
      sent++
      return answers.shift()!
    })
    expect(res.status).toBe(200)
    expect(sent).toBe(2)
    expect(waited.length).toBe(1)
    expect(waited[0]).toBeGreaterThan(1000)
  })

  it('tells the ledger the executions its receipts accepted (Run, Session and Turn creations)', async () => {
    const ledger = new RunLedger({ allow: true, maxExecutions: 5 })
    const pacer = new RunPacer(ledger, { spend: true }, async () => {})
    const answer = (status: number, body: unknown) => async () => ({ ...response(status), body })
    await pacer.send(
      { method: 'POST', path: '/v1/workflows/w/runs', idem: 'a', key: 'k1' },
      answer(202, { run_id: 'r1' }),
    )
    await pacer.send(
      { method: 'POST', path: '/v1/deployments/d/sessions', idem: 'b' },
      answer(202, { session_id: 's1', turn_id: 't1' }),
    )
    await pacer.send(
      { method: 'POST', path: '/v1/sessions/s1/turns', idem: 'c' },
      answer(202, { turn_id: 't2' }),
    )
    // Refused or not a creation: nothing started.
    await pacer.send(
      { method: 'POST', path: '/v1/workflows/w/runs', idem: 'd' },
      answer(409, { run_id: 'r9' }),
    )
    await pacer.send({ method: 'GET', path: '/v1/runs/r1' }, answer(200, { run_id: 'r1' }))
    expect(ledger.startedExecutions()).toEqual([
      { kind: 'run', runId: 'r1', key: 'k1' },
      { kind: 'turn', sessionId: 's1', turnId: 't1' },
      { kind: 'turn', sessionId: 's1', turnId: 't2' },
    ])
  })

  it('gives up after a bounded number of resends', async () => {
    const pacer = new RunPacer(
      new RunLedger({ allow: true, maxExecutions: 1 }),
      { spend: false, maxResends: 2 },
      async () => {},
    )
    let sent = 0
    const res = await pacer.send({ method: 'GET', path: '/v1/x' }, async () => {
      sent++
      return response(429, { 'retry-after': '1' })
    })
    expect(res.status).toBe(429)
    expect(sent).toBe(3)
  })

  it('refuses a spending request before anything is sent (the test is skipped with the reason)', async () => {
    const pacer = new RunPacer(new RunLedger({ allow: false, maxExecutions: 1 }), {
      spend: true,
      refuse: (reason) => {
        throw new Error(`refused: ${reason}`)
      },
    })
    let sent = false
    const send = async () => {
      sent = true
      return response(201)
    }
    await expect(pacer.send({ method: 'POST', path: '/v1/files' }, send)).rejects.toThrow(
      'refused: needs --allow-spend',
    )
    expect(sent).toBe(false)
    // Reads are never refused.
    expect((await pacer.send({ method: 'GET', path: '/v1/files/f' }, send)).status).toBe(201)
  })
})
