import { createMock } from '/work/wt-speed/mock/index.ts'
const mock = await createMock({ rateLimits: false })
const H = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }
const res = await mock.app.request('/v1/deployments/aaaaaaaa-d000-4000-8000-000000000001/sessions', { method: 'POST', headers: { ...H, 'Idempotency-Key': 'a' }, body: JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } }) })
const { status_url } = await res.json() as any
await mock.clock.advance(5)
const path = process.argv[2] === 'dep' ? '/v1/deployments' : status_url
for (let i = 0; i < 5000; i++) await (await mock.app.request(path, { headers: H })).arrayBuffer()
const { Session } = await import('node:inspector/promises')
const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.setSamplingInterval', { interval: 100 }); await s.post('Profiler.start')
const c0 = process.cpuUsage()
for (let i = 0; i < 10000; i++) await (await mock.app.request(path, { headers: H })).arrayBuffer()
const c = process.cpuUsage(c0)
const { profile } = await s.post('Profiler.stop') as any
console.log('cpu per request µs', (c.user + c.system) / 10000)
;(await import('node:fs')).writeFileSync('/tmp/inproc.cpuprofile', JSON.stringify(profile))
mock.close()
