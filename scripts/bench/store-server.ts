/**
 * A mock holding `n` stored Sessions (the built mock, dist/), served over HTTP for the store-size bench: node --import tsx
 * scripts/bench/store-server.ts <world.json> <n>. Fills the store through the app (each Session a Turn that
 * runs to its end, 1,000 a virtual day), then prints `listening on <url> turn=<status_url>`.
 */
import { fillSessions } from './scale.js'
import { DEPLOYMENT, JSON_AUTH, SESSION_BODY } from './world.js'

// The built mock (dist/), as users run it; fillSessions only uses its app and clock.
const { createMock } = (await import(
  new URL('../../dist/mock/index.js', import.meta.url).href
)) as typeof import('../../mock/index.js')

const [world, countText] = process.argv.slice(2)
const n = Number(countText)
const mock = await createMock({ fixtures: world, rateLimits: false })
// 1,000 Sessions a virtual day: an acceptance sums the SU its Project settled that UTC day (budget rule), so a
// store filled in one day would make each acceptance slower than the last; a busy Project's days are bounded.
const filled = await fillSessions(mock, n, { tag: 'fill', drainEvery: 1000, drainSeconds: 86_400 })
await mock.clock.advance(3600)
const res = await mock.app.request(`/v1/deployments/${DEPLOYMENT}/sessions`, {
  method: 'POST',
  headers: { ...JSON_AUTH, 'Idempotency-Key': 'measured' },
  body: SESSION_BODY,
})
const { status_url } = (await res.json()) as { status_url: string }
await mock.clock.advance(60)
const served = await mock.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(
  `accepted ${filled.accepted} refused ${JSON.stringify(filled.refused)}\nlistening on ${served.url} turn=${status_url}\n`,
)
const stop = () => {
  void served.close().then(() => {
    mock.close()
    process.exit(0)
  })
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
