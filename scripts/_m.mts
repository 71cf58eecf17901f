import { createMock } from '/work/wt-speed/mock/index.ts'
const mock = await createMock({ rateLimits: false })
const H = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }
const res = await mock.app.request('/v1/deployments/aaaaaaaa-d000-4000-8000-000000000001/sessions', { method: 'POST', headers: { ...H, 'Idempotency-Key': 'a' }, body: JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }], limits: { max_su: 1 } }) })
const { turn_id } = await res.json() as any
await mock.clock.advance(5)
const raw = mock.deps.db.raw
const qs: Record<string, [string, any[]]> = {
  outputsAll: ['SELECT position, item_json FROM outputs WHERE execution_id = ? AND position > ? ORDER BY position LIMIT ?', [turn_id, -1, 51]],
  outputsNoOrder: ['SELECT position, item_json FROM outputs WHERE execution_id = ? AND position > ? LIMIT ?', [turn_id, -1, 51]],
  outputsNoLimit: ['SELECT position, item_json FROM outputs WHERE execution_id = ? AND position > ? ORDER BY position', [turn_id, -1]],
  exec: ['SELECT * FROM executions WHERE id = ?', [turn_id]],
  key: ['SELECT * FROM api_keys WHERE key = ?', ['sk_test_a_full']],
}
for (let r = 0; r < 3; r++) for (const [k, [sql, args]] of Object.entries(qs)) {
  const s = raw.prepare(sql)
  const c0 = process.cpuUsage()
  for (let i = 0; i < 20000; i++) k.startsWith('outputs') ? s.all(...args) : s.get(...args)
  const c = process.cpuUsage(c0); console.log(r, k, ((c.user + c.system) / 20000).toFixed(2))
}
console.log(raw.prepare('select count(*) n from outputs').get(), raw.prepare("select * from outputs").all())
mock.close()
