/**
 * The inspector page in a real browser: Debian's Chromium (CHROMIUM_PATH, else /usr/bin/chromium) driven by
 * playwright-core, against a mock listening on 127.0.0.1. Skipped, with the reason in its title, when no
 * Chromium is found (`.ci/run` installs it first). The second test also writes the README's screenshot:
 * docs/inspector.png with UPDATE_SCREENSHOT=1, otherwise a file in a temporary folder (the tree stays clean).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser']
const executablePath = CANDIDATES.find((p): p is string => !!p && existsSync(p))
const title = executablePath
  ? `inspector page in Chromium (${executablePath})`
  : 'inspector page in Chromium (skipped: no Chromium at CHROMIUM_PATH or /usr/bin/chromium; apt-get install chromium)'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'
const PROJECT = 'aaaaaaaa-0000-4000-8000-000000000000'
/**
 * The page's document inside functions that run in the browser: page.waitForFunction serialises them (so
 * they name nothing of this module), and the page's CSP refuses string evaluation. This file is typed for
 * Node, without the DOM library, hence the cast inside each function.
 */
type PageDocument = {
  querySelector(selector: string): { textContent: string | null } | null
  querySelectorAll(selector: string): { length: number }
}
type InPage = { document: PageDocument }

/** Bound of each wait for the page (not a timing assertion: a slow machine only waits longer). */
const WAIT = { timeout: 30_000 }

describe.skipIf(!executablePath)(title, () => {
  let browser: Browser
  let mock: Mock
  let base: string
  let stop: () => Promise<void>
  let page: Page
  let receiver: Server | undefined
  const shots = mkdtempSync(join(tmpdir(), 'inspector-'))

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    rmSync(shots, { recursive: true, force: true })
  })

  async function start(
    opts: { allowInsecureWebhooks?: boolean; controlToken?: string } = {},
    token?: string,
  ) {
    mock = await createMock(opts)
    const listening = await mock.listen({ host: '127.0.0.1', port: 0 })
    base = listening.url
    stop = listening.close
    page = await browser.newPage({ viewport: { width: 1360, height: 1180 } })
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(e.message))
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()))
    await page.goto(`${base}/_mock/ui`)
    if (token !== undefined) {
      // A mock started with a control token: the page asks for it before it shows anything.
      await page.waitForSelector('#token-form:not([hidden])', WAIT)
      await page.fill('#token', token)
      await page.click('#token-form button')
    }
    await page.waitForSelector('body[data-live="yes"]', WAIT)
    return problems
  }
  afterEach(async () => {
    await page?.close()
    await stop?.()
    mock?.close()
    if (receiver) {
      receiver.closeAllConnections()
      await new Promise((resolve) => receiver!.close(resolve))
      receiver = undefined
    }
  })

  async function createSession(idem: string) {
    const res = await fetch(`${base}/v1/deployments/${DEPLOYMENT}/sessions`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${KEY}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': idem,
      },
      body: JSON.stringify({ input: [{ type: 'TEXT', text: 'Summarise the quarterly report' }] }),
    })
    expect(res.status).toBe(202)
    return (await res.json()) as { session_id: string; turn_id: string }
  }

  const timelineStatus = (p: Page) => p.textContent('#timeline-status')

  /** Polls a condition on the test's side (bounded by WAIT). */
  async function waitUntil(ok: () => boolean) {
    const deadline = Date.now() + WAIT.timeout
    while (!ok()) {
      if (Date.now() > deadline) throw new Error('condition not met in time')
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  it('shows a Session created through the API and, after the advance button, its Turn SUCCEEDED on the timeline', async () => {
    const problems = await start()
    const { turn_id } = await createSession('browser-1')
    // The page hears of the new Turn on its stream, without a reload.
    const row = `tr[data-execution-id="${turn_id}"]`
    await page.waitForSelector(row, WAIT)
    await page.click(row)
    await page.waitForSelector('#timeline-status', WAIT)
    expect(await timelineStatus(page)).toBe('QUEUED')
    expect(await page.textContent('#timeline')).toContain('queue timeout')

    await page.click('#advance-1m')
    await page.waitForFunction(
      () =>
        (globalThis as unknown as InPage).document.querySelector('#timeline-status')
          ?.textContent === 'SUCCEEDED',
      undefined,
      WAIT,
    )
    const kinds = await page.$$eval('#timeline tr[data-kind="status"] td:last-child', (tds) =>
      tds.map((td) => td.textContent ?? ''),
    )
    expect(kinds.at(-1)).toMatch(/^SUCCEEDED/)
    expect(await page.textContent(`${row} td:nth-child(4)`)).toContain('SUCCEEDED')
    expect(await page.textContent('#now')).toContain(
      mock.clock.now().toISOString().slice(0, 19).replace('T', ' '),
    )
    expect(problems).toEqual([])
  }, 90_000)

  it('asks for the control token of a mock started with one, then follows it live', async () => {
    const problems = await start({ controlToken: 'ctl-secret' }, 'ctl-secret')
    const { turn_id } = await createSession('browser-3')
    await page.waitForSelector(`tr[data-execution-id="${turn_id}"]`, WAIT)
    expect(await page.isHidden('#token-form')).toBe(true)
    // The 401s before the token was given are the only errors the console saw.
    expect(problems.every((p) => p.includes('401'))).toBe(true)
  }, 90_000)

  it('opens a failing webhook delivery and sees each attempt with its HTTP status, then the retries to come', async () => {
    receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end()))
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))
    const problems = await start({ allowInsecureWebhooks: true })
    const owner = mock.fixtures().projects.find((p) => p.id === PROJECT)!.owner_token
    const registered = await fetch(`${base}/api/runtime/projects/${PROJECT}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      }),
    })
    expect(registered.status).toBe(201)
    const { turn_id } = await createSession('browser-2')
    const startedAt = mock.clock.now().getTime()
    await page.waitForSelector(`tr[data-execution-id="${turn_id}"]`, WAIT)
    await page.click(`tr[data-execution-id="${turn_id}"]`)
    // The button's request reaches the mock after the click returns: wait for the clock to move before
    // waiting for the webhook sends the advance started.
    for (const minutes of [1, 2]) {
      await page.click('#advance-1m')
      await waitUntil(() => mock.clock.now().getTime() >= startedAt + minutes * 60_000)
      await mock.webhooks.idle()
    }

    const listed = await fetch(`${base}/api/runtime/projects/${PROJECT}/webhook-deliveries`, {
      headers: { Authorization: `Bearer ${owner}` },
    })
    const { items } = (await listed.json()) as {
      items: { id: string; event_type: string; attempts: number }[]
    }
    const failing = items.find((d) => d.attempts === 2)!
    expect(failing).toBeDefined()
    const delivery = `details[data-delivery-id="${failing.id}"]`
    await page.waitForFunction(
      (sel) =>
        (globalThis as unknown as InPage).document
          .querySelector(sel)
          ?.textContent?.includes('2 attempts') ?? false,
      delivery,
      WAIT,
    )
    await page.click(`${delivery} > summary`)
    await page.waitForFunction(
      (sel) =>
        (globalThis as unknown as InPage).document.querySelectorAll(`${sel}[open] tr.attempt`)
          .length === 2,
      delivery,
      WAIT,
    )
    const attempts = await page.$$eval(`${delivery} tr.attempt`, (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
    )
    expect(attempts.map((a) => [a[0], a[2], a[4]])).toEqual([
      ['1', '500', 'FAILED'],
      ['2', '500', 'FAILED'],
    ])
    expect(await page.textContent(delivery)).toContain('retries to come')
    expect(await page.textContent('#timeline')).toContain(`webhook ${failing.event_type} attempt 2`)

    const file = process.env.UPDATE_SCREENSHOT
      ? fileURLToPath(new URL('../../docs/inspector.png', import.meta.url))
      : join(shots, 'inspector.png')
    await page.screenshot({ path: file })
    expect(existsSync(file)).toBe(true)
    expect(problems).toEqual([])
  }, 90_000)
})
