/**
 * The webhook checks (conformance/support/webhook-checks.ts), both ways: a delivery made as the document says
 * passes, and each way of breaking one rule fails with a problem naming it. Signed here with node:crypto from
 * the document's words (an independent reading of rule 3: the key is the secret's UTF-8 bytes).
 */
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  checkBody,
  checkRetry,
  checkSignature,
  MAX_BODY_BYTES,
  parseSignatureHeader,
  windowProblem,
} from '../support/webhook-checks.js'

const SECRET = 'whsec_conformance_7f3a9c'
const NOW = 1_790_000_000
const BODY = {
  event_id: '2f1c7e9a-8b3d-4c5e-9f10-1a2b3c4d5e6f',
  type: 'turn.completed',
  aggregate_kind: 'SESSION',
  sequence: 7,
  occurred_at: '2026-09-21T10:00:00Z',
  session_id: 'ses_1',
  turn_id: 'turn_1',
  status_url: '/v1/sessions/ses_1/turns/turn_1',
  outputs_url: '/v1/sessions/ses_1/turns/turn_1/outputs',
  status: 'SUCCEEDED',
}
/** Bytes as a sender might write them: not the shape JSON.stringify gives (spaces after the colons). */
const RAW = Buffer.from(JSON.stringify(BODY, null, 1))

const sign = (raw: Uint8Array, t = NOW, secret = SECRET) =>
  `t=${t},v1=${createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${t}.`), raw]))
    .digest('hex')}`

describe('webhook checks', () => {
  it('a delivery made as the document says passes every check', () => {
    expect(checkSignature({ header: sign(RAW), raw: RAW, secrets: [SECRET], nowS: NOW })).toEqual({
      problems: [],
      signature: expect.objectContaining({ t: NOW }) as unknown,
    })
    const body = checkBody(RAW, { forbidden: ['confidential-input'] })
    expect(body.problems).toEqual([])
    expect(body.extraFields).toEqual([])
    expect(body.body).toEqual(BODY)
  })

  it('verifies with either secret during a rotation', () => {
    const header = sign(RAW, NOW, 'new-secret')
    expect(
      checkSignature({ header, raw: RAW, secrets: [SECRET, 'new-secret'], nowS: NOW }).problems,
    ).toEqual([])
    expect(
      checkSignature({ header, raw: RAW, secrets: [SECRET], nowS: NOW }).problems,
    ).toHaveLength(1)
  })

  it('fails a body that was re-serialised (the signature is over other bytes than those received)', () => {
    const reserialised = Buffer.from(JSON.stringify(BODY))
    expect(reserialised.equals(RAW)).toBe(false)
    // The receiver got RAW, the sender signed the re-serialised JSON.
    const { problems } = checkSignature({
      header: sign(reserialised),
      raw: RAW,
      secrets: [SECRET],
      nowS: NOW,
    })
    expect(problems).toEqual([expect.stringMatching(/re-serialised as JSON/)])
    // And the other way: signed over RAW, checked over re-serialised bytes.
    expect(
      checkSignature({ header: sign(RAW), raw: reserialised, secrets: [SECRET], nowS: NOW })
        .problems,
    ).toEqual([expect.stringMatching(/not HMAC-SHA256/)])
  })

  it('fails a stale or future timestamp (over 300 s from the receiver clock), passes 300 s', () => {
    for (const t of [NOW - 301, NOW + 301]) {
      const { problems } = checkSignature({
        header: sign(RAW, t),
        raw: RAW,
        secrets: [SECRET],
        nowS: NOW,
      })
      expect(problems).toEqual([expect.stringMatching(/over 300 s/)])
    }
    expect(windowProblem(NOW - 300, NOW)).toBeUndefined()
    expect(windowProblem(NOW + 300, NOW)).toBeUndefined()
  })

  it('fails a body of 4,097 bytes and passes one of 4,096', () => {
    const padded = (n: number) => {
      const base = JSON.stringify({ ...BODY, status: '' })
      const raw = Buffer.from(
        base.replace('"status":""', `"status":"${'S'.repeat(n - base.length)}"`),
      )
      expect(raw.byteLength).toBe(n)
      return raw
    }
    expect(checkBody(padded(MAX_BODY_BYTES)).problems).toEqual([])
    expect(checkBody(padded(MAX_BODY_BYTES + 1)).problems).toEqual([
      'the body is 4097 bytes: over 4096',
    ])
  })

  it('fails an uppercase-hex signature and other header shapes', () => {
    const header = sign(RAW)
    const upper = header.replace(/v1=(.*)$/, (_, hex: string) => `v1=${hex.toUpperCase()}`)
    expect(
      checkSignature({ header: upper, raw: RAW, secrets: [SECRET], nowS: NOW }).problems,
    ).toEqual([expect.stringMatching(/64 lowercase hex/)])
    for (const bad of [
      undefined,
      ['a', 'b'],
      `t=1234567890123,${header.split(',')[1]}`, // 13 digits
      `t=,${header.split(',')[1]}`,
      `${header.split(',')[0]},v1=${'a'.repeat(63)}`,
      `v1=${header.split('v1=')[1]},t=${NOW}`,
      `${header} `,
      header.replace(',', ', '),
    ]) {
      expect(parseSignatureHeader(bad).ok, String(bad)).toBe(false)
      expect(
        checkSignature({ header: bad, raw: RAW, secrets: [SECRET], nowS: NOW }).problems,
      ).toHaveLength(1)
    }
  })

  it('fails a body without a documented field, with a bad field, or with raw content or addresses', () => {
    const problemsOf = (body: unknown, forbidden: string[] = []) =>
      checkBody(Buffer.from(JSON.stringify(body)), { forbidden }).problems
    const { event_id: _id, ...noId } = BODY
    expect(problemsOf(noId)).toEqual(['no event_id'])
    expect(problemsOf({ ...BODY, event_id: 'evt_1' })).toEqual(['event_id "evt_1" is not a uuid'])
    expect(problemsOf({ ...BODY, sequence: '7' })).toEqual(['sequence "7" is not an integer'])
    expect(problemsOf({ ...BODY, occurred_at: 'yesterday' })).toEqual([
      'occurred_at "yesterday" is not a timestamp',
    ])
    const { turn_id: _t, ...noTurn } = BODY
    expect(problemsOf(noTurn)).toEqual(['no turn_id'])
    expect(
      problemsOf({ ...BODY, type: 'run.completed', aggregate_kind: 'RUN', run_id: undefined }),
    ).toContain('no run_id')
    expect(
      problemsOf({ ...BODY, status_url: 'https://api.example.com/v1/sessions/ses_1' }),
    ).toEqual([
      'status_url "https://api.example.com/v1/sessions/ses_1" is not a relative path',
      'the body holds an absolute address (scheme://)',
    ])
    expect(
      problemsOf({ ...BODY, status: 'SUCCEEDED: confidential-input' }, ['confidential-input']),
    ).toEqual(['the body holds "confidential-input" (raw input or result)'])
    expect(problemsOf({ ...BODY, outputs_url: '/v1/artifacts/a/content?token=x' })).toEqual([
      'the body holds a download address (?token=)',
    ])
    expect(checkBody(Buffer.from('{"event_id":')).problems).toEqual(['the body is not JSON'])
    expect(checkBody(Buffer.from([0xff, 0xfe])).problems).toEqual(['the body is not UTF-8'])
    expect(checkBody(Buffer.from(JSON.stringify({ ...BODY, extra: 1 }))).extraFields).toEqual([
      'extra',
    ])
  })

  it('a retry keeps the event_id and bytes and renews timestamp and signature', () => {
    const first = { header: sign(RAW), raw: RAW }
    expect(checkRetry(first, { header: sign(RAW, NOW + 60), raw: RAW })).toEqual([])
    expect(checkRetry(first, first)).toEqual([
      expect.stringMatching(/no fresh timestamp/),
      expect.stringMatching(/no fresh signature/),
    ])
    const other = Buffer.from(
      JSON.stringify({ ...BODY, event_id: 'e0a1b2c3-d4e5-4f60-8a1b-2c3d4e5f6a7b' }),
    )
    expect(checkRetry(first, { header: sign(other, NOW + 60), raw: other })).toEqual([
      expect.stringMatching(/event_id/),
      expect.stringMatching(/bytes differ/),
    ])
    const reserialised = Buffer.from(JSON.stringify(BODY))
    expect(checkRetry(first, { header: sign(reserialised, NOW + 60), raw: reserialised })).toEqual([
      expect.stringMatching(/bytes differ/),
    ])
  })
})
