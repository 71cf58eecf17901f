// The inspector page (GET /_mock/ui): a plain browser module, no framework, no build step. It reads the
// mock's state from GET /_mock/ui/state (and one execution's timeline from GET /_mock/ui/executions/{id}),
// follows GET /_mock/stream and re-reads the state when something changes (never by polling). Everything
// it shows goes through textContent and DOM nodes, so data are always escaped; the server has already
// redacted every key, token and secret.

const $ = (selector) => document.querySelector(selector)

/** A DOM element: attributes (`class`, `data-*`, `on*` handlers) and children (strings become text nodes). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value)
    else if (name === 'class') el.className = value
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    el.append(child instanceof globalThis.Node ? child : document.createTextNode(String(child)))
  }
  return el
}

const ui = {
  token: sessionStorage.getItem('mock-control-token') ?? '',
  state: undefined,
  selected: undefined,
  timeline: undefined,
  openDeliveries: new Set(),
  clock: { nowMs: 0, mode: 'manual', receivedAt: 0 },
}

const headers = (extra = {}) =>
  ui.token ? { ...extra, Authorization: `Bearer ${ui.token}` } : { ...extra }

/** A control-API call; a 401 asks for the control token. */
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: headers(init.headers) })
  if (res.status === 401) {
    $('#token-form').hidden = false
    throw new Error('the control API needs its token')
  }
  const body = await res.json().catch(() => null)
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`)
  return body
}

function showError(error) {
  const el = $('#error')
  el.hidden = !error
  el.textContent = error ? String(error.message ?? error) : ''
}

// ---- time -------------------------------------------------------------------------------------------

const fmt = (iso) => (iso ? iso.replace('T', ' ').replace(/\.000Z$|Z$/, 'Z') : '')

/** A duration in s, min, h or days. */
function span(ms) {
  const s = Math.round(Math.abs(ms) / 1000)
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  if (s < 172800) return `${(s / 3600).toFixed(1).replace(/\.0$/, '')} h`
  return `${(s / 86400).toFixed(1).replace(/\.0$/, '')} days`
}

const clockNow = () =>
  ui.clock.mode === 'realtime'
    ? ui.clock.nowMs + (Date.now() - ui.clock.receivedAt)
    : ui.clock.nowMs

function setClock(now, mode) {
  ui.clock = { nowMs: Date.parse(now), mode, receivedAt: Date.now() }
  renderClock()
}

function renderClock() {
  $('#now').textContent = fmt(new Date(clockNow()).toISOString())
  $('#mode').textContent = ui.clock.mode
  $('#mode-switch').textContent =
    ui.clock.mode === 'manual' ? 'switch to realtime' : 'switch to manual'
  const next = ui.state?.next_timer_at
  $('#next-timer').textContent = next
    ? `next timer ${fmt(next)} (in ${span(Date.parse(next) - clockNow())})`
    : 'no timer pending'
  $('#advance-next').disabled = !next
}

async function advance(seconds) {
  showError(undefined)
  try {
    await api('/_mock/clock/advance', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ seconds }),
    })
  } catch (error) {
    showError(error)
  }
}

async function advanceToNextTimer() {
  const state = await api('/_mock/ui/state')
  if (!state.next_timer_at) return
  const seconds = (Date.parse(state.next_timer_at) - Date.parse(state.now)) / 1000
  await advance(Math.max(seconds, 0.001))
}

async function switchMode() {
  try {
    await api('/_mock/clock', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: ui.clock.mode === 'manual' ? 'realtime' : 'manual' }),
    })
  } catch (error) {
    showError(error)
  }
}

// ---- state ------------------------------------------------------------------------------------------

let reading = false
let readAgain = false

/** Reads the state (and the selected timeline) once; changes during a read give one more read after it. */
async function refresh() {
  if (reading) {
    readAgain = true
    return
  }
  reading = true
  try {
    do {
      readAgain = false
      const state = await api('/_mock/ui/state')
      const timeline = ui.selected
        ? await api(`/_mock/ui/executions/${encodeURIComponent(ui.selected)}`).catch(
            () => undefined,
          )
        : undefined
      ui.state = state
      ui.timeline = timeline
      setClock(state.now, state.mode)
      render()
    } while (readAgain)
    showError(undefined)
  } catch (error) {
    showError(error)
  } finally {
    reading = false
  }
}

// ---- the change stream ------------------------------------------------------------------------------

function setLive(live, text) {
  const el = $('#live')
  el.className = live ? 'live on' : 'live off'
  el.textContent = text
  document.body.dataset.live = live ? 'yes' : 'no'
}

/** Follows GET /_mock/stream (fetch, so the control token can be sent); reconnects after a cut. */
async function follow() {
  for (;;) {
    try {
      const res = await fetch('/_mock/stream', {
        headers: headers({ Accept: 'text/event-stream' }),
      })
      if (res.status === 401) {
        $('#token-form').hidden = false
        setLive(false, 'needs the control token')
        return
      }
      if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`)
      setLive(true, 'live')
      await refresh()
      const reader = res.body.getReader()
      const decoder = new TextDecoder()
      let buffer = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        let end
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          onFrame(buffer.slice(0, end))
          buffer = buffer.slice(end + 2)
        }
      }
    } catch {
      // the mock stopped or the connection was cut: try again
    }
    setLive(false, 'reconnecting…')
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

function onFrame(text) {
  let event = 'message'
  let data = ''
  for (const line of text.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim()
    else if (line.startsWith('data:')) data += line.slice(5).trim()
  }
  if (!data) return
  if (event === 'clock') {
    const clock = JSON.parse(data)
    setClock(clock.now, clock.mode)
  }
  void refresh()
}

// ---- rendering --------------------------------------------------------------------------------------

const badge = (text, kind = text) =>
  h(
    'span',
    {
      class: `badge s-${String(kind)
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')}`,
    },
    text,
  )

const short = (id) => (id ? `${String(id).slice(0, 8)}…` : '')

function table(columns, rows) {
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', {}, c)),
      ),
    ),
    h('tbody', {}, rows),
  )
}

function render() {
  renderClock()
  renderExecutions()
  renderTimeline()
  renderDeliveries()
  renderProjects()
  renderRehearsal()
}

function renderExecutions() {
  const { executions, sessions } = ui.state
  const text = $('#filter-text').value.trim().toLowerCase()
  const kind = $('#filter-kind').value
  const status = $('#filter-status').value
  const statusSelect = $('#filter-status')
  const known = new Set([...statusSelect.options].map((o) => o.value))
  for (const e of executions)
    if (!known.has(e.status)) statusSelect.append(h('option', { value: e.status }, e.status))
  const shown = executions.filter(
    (e) =>
      (!kind || e.kind === kind) &&
      (!status || e.status === status) &&
      (!text ||
        [e.id, e.session_id, e.workflow_id, e.scenario, e.status, e.error_code]
          .filter(Boolean)
          .some((v) => String(v).toLowerCase().includes(text))),
  )
  const rows = shown.map((e) =>
    h(
      'tr',
      {
        class: e.id === ui.selected ? 'selected' : undefined,
        'data-execution-id': e.id,
        tabindex: 0,
        onclick: () => select(e.id),
        onkeydown: (event) => event.key === 'Enter' && select(e.id),
      },
      h('td', {}, e.kind === 'RUN' ? 'Run' : 'Turn'),
      h('td', { class: 'mono', title: e.id }, short(e.id)),
      h('td', { class: 'mono', title: e.session_id ?? '' }, short(e.session_id ?? e.workflow_id)),
      h('td', {}, badge(e.status), e.error_code ? ` ${e.error_code}` : ''),
      h('td', {}, e.scenario),
      h('td', { class: 'num' }, `${e.spent_su} / ${e.max_su}`),
      h('td', {}, fmt(e.created_at)),
      h('td', {}, fmt(e.completed_at)),
    ),
  )
  $('#executions tbody').replaceChildren(
    ...(rows.length ? rows : [h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'none yet'))]),
  )
  $('#session-count').textContent = String(sessions.length)
  $('#sessions tbody').replaceChildren(
    ...sessions.map((s) =>
      h(
        'tr',
        {
          onclick: () => {
            $('#filter-text').value = s.id
            renderExecutions()
          },
        },
        h('td', { class: 'mono', title: s.id }, s.id),
        h('td', {}, badge(s.status)),
        h('td', { class: 'mono', title: s.deployment_id }, short(s.deployment_id)),
        h('td', {}, fmt(s.created_at)),
        h('td', {}, fmt(s.last_activity_at)),
      ),
    ),
  )
}

function select(id) {
  ui.selected = id
  ui.timeline = undefined
  renderExecutions()
  renderTimeline()
  void refresh()
}

function renderTimeline() {
  const root = $('#timeline')
  const t = ui.timeline
  if (!t || t.execution.id !== ui.selected) {
    $('#timeline-title').textContent = ui.selected ? short(ui.selected) : '(select a Turn or Run)'
    root.replaceChildren()
    return
  }
  const e = t.execution
  $('#timeline-title').textContent = `${e.kind === 'RUN' ? 'Run' : 'Turn'} ${e.id}`
  const startMs = Date.parse(e.created_at)
  const nowMs = Date.parse(t.now)
  const lastMs = Math.max(
    nowMs,
    ...t.entries.map((x) => Date.parse(x.at)),
    ...t.pending.map((x) => Date.parse(x.at)),
  )
  const width = Math.max(lastMs - startMs, 1000)
  const pos = (iso) => `${((Date.parse(iso) - startMs) / width) * 100}%`
  const marker = (x, pending) => {
    const m = h('span', {
      class: `marker k-${x.kind}${pending ? ' pending' : ''}`,
      title: `${fmt(x.at)} ${x.label}`,
    })
    m.style.left = pos(x.at)
    return m
  }
  const nowLine = h('span', { class: 'now-line', title: `now ${fmt(t.now)}` })
  nowLine.style.left = pos(t.now)
  const axis = h(
    'div',
    { class: 'axis' },
    t.entries.map((x) => marker(x, false)),
    t.pending.map((x) => marker(x, true)),
    nowLine,
    h('span', { class: 'axis-start' }, fmt(e.created_at)),
    h('span', { class: 'axis-end' }, `+${span(width)}`),
  )
  const offset = (iso) => `+${span(Date.parse(iso) - startMs)}`
  const row = (x, pending) =>
    h(
      'tr',
      { class: pending ? 'pending' : undefined, 'data-kind': x.kind },
      h('td', {}, fmt(x.at)),
      h('td', { class: 'muted' }, pending ? `in ${span(Date.parse(x.at) - nowMs)}` : offset(x.at)),
      h('td', {}, badge(x.kind)),
      h('td', {}, x.label),
      h('td', { class: 'detail' }, x.detail),
    )
  root.replaceChildren(
    h(
      'p',
      { class: 'summary' },
      badge(e.status),
      h('span', { id: 'timeline-status' }, e.status),
      ` · scenario ${e.scenario} · SU ${e.spent_su} of ${e.max_su} (usage ${e.usage_status})`,
      e.error_code ? ` · ${e.error_code}` : '',
      e.deadline_at ? ` · deadline ${fmt(e.deadline_at)}` : '',
    ),
    axis,
    h('h3', {}, 'What happened'),
    table(
      ['virtual time', '', 'kind', 'what', 'detail'],
      t.entries.map((x) => row(x, false)),
    ),
    h('h3', {}, 'Still pending'),
    t.pending.length
      ? table(
          ['virtual time', '', 'kind', 'what', 'timer'],
          t.pending.map((x) => row(x, true)),
        )
      : h('p', { class: 'muted' }, 'no timer pending'),
  )
}

function deliveryView(d) {
  const details = h(
    'details',
    {
      'data-delivery-id': d.id,
      open: ui.openDeliveries.has(d.id),
      ontoggle: (event) => {
        if (event.target.open) ui.openDeliveries.add(d.id)
        else ui.openDeliveries.delete(d.id)
        // Toggled just before a refresh replaced it: show the new one the same way.
        if (!event.target.isConnected) renderDeliveries()
      },
    },
    h(
      'summary',
      {},
      badge(d.status),
      ` ${d.event_type} · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`,
      d.next_attempt_at ? ` · next ${fmt(d.next_attempt_at)}` : '',
      h('span', { class: 'muted mono' }, ` ${short(d.id)} → endpoint ${short(d.endpoint_id)}`),
    ),
    table(
      ['attempt', 'signed at (virtual)', 'HTTP status', 'error code', 'outcome'],
      d.history.map((a) =>
        h(
          'tr',
          { class: 'attempt' },
          h('td', {}, String(a.attempt)),
          h('td', {}, fmt(a.signed_at)),
          h('td', {}, a.http_status ?? ''),
          h('td', {}, a.error_code ?? ''),
          h('td', {}, badge(a.outcome)),
        ),
      ),
    ),
    d.retries_to_come.length
      ? h(
          'p',
          { class: 'muted' },
          `retries to come: ${d.retries_to_come.map((at) => fmt(at)).join(', ')}`,
        )
      : null,
  )
  return details
}

function renderDeliveries() {
  const list = ui.state.deliveries
  $('#deliveries').replaceChildren(
    ...(list.length ? list.map(deliveryView) : [h('p', { class: 'muted' }, 'no delivery yet')]),
  )
}

function budgetLine(name, w) {
  return h(
    'li',
    {},
    `${name}: settled ${w.settled_su} + reserved ${w.reserved_su} of ${w.budget_su} SU (resets ${fmt(w.reset_at)})`,
  )
}

function renderProjects() {
  $('#projects').replaceChildren(
    ...ui.state.projects.map((p) =>
      h(
        'article',
        { class: 'project', 'data-project-id': p.id },
        h(
          'h3',
          {},
          `${p.name} `,
          h('span', { class: 'muted mono' }, p.id),
          ' ',
          badge(p.approved ? 'approved' : 'not approved', p.approved ? 'ok' : 'failed'),
        ),
        h(
          'ul',
          { class: 'facts' },
          h('li', {}, `SU balance ${p.su_balance}`),
          p.budget ? budgetLine('today', p.budget.daily) : null,
          p.budget ? budgetLine('this month', p.budget.monthly) : null,
          h('li', {}, 'owner token ', h('span', { class: 'mono' }, p.owner_token)),
        ),
        h('h4', {}, 'API keys'),
        table(
          ['key', 'name', 'scopes', 'Deployments', 'state'],
          p.keys.map((k) =>
            h(
              'tr',
              {},
              h('td', { class: 'mono' }, k.key),
              h('td', {}, k.name),
              h('td', { class: 'detail' }, k.scopes.join(' ')),
              h('td', {}, k.deployment_ids.length ? String(k.deployment_ids.length) : 'all'),
              h(
                'td',
                {},
                k.revoked
                  ? badge('revoked', 'failed')
                  : k.expires_at
                    ? `expires ${fmt(k.expires_at)}`
                    : '',
              ),
            ),
          ),
        ),
        h('h4', {}, 'Call-rate windows'),
        p.rate_windows.length
          ? table(
              ['scope', 'class', 'calls', 'resets'],
              p.rate_windows.map((w) =>
                h(
                  'tr',
                  { class: w.open ? undefined : 'muted' },
                  h('td', { class: 'mono' }, w.scope),
                  h('td', {}, w.rate_class),
                  h('td', { class: 'num' }, `${w.count} / ${w.limit ?? '?'}`),
                  h('td', {}, w.open ? fmt(w.resets_at) : 'closed'),
                ),
              ),
            )
          : h('p', { class: 'muted' }, 'no call counted yet'),
        h('h4', {}, 'Deployments and Workflows'),
        h(
          'ul',
          { class: 'facts' },
          p.deployments.map((d) =>
            h(
              'li',
              {},
              `${d.name} `,
              h('span', { class: 'mono muted' }, d.id),
              ' ',
              badge(d.status),
            ),
          ),
          p.workflows.map((w) =>
            h(
              'li',
              {},
              `workflow ${w.name} v${w.published_version} `,
              h('span', { class: 'mono muted' }, w.id),
              ' ',
              badge(w.available ? 'available' : 'unavailable', w.available ? 'ok' : 'failed'),
            ),
          ),
        ),
        p.webhook_endpoints.length
          ? [
              h('h4', {}, 'Webhook endpoints'),
              table(
                ['url', 'status', 'secret', 'event types'],
                p.webhook_endpoints.map((w) =>
                  h(
                    'tr',
                    {},
                    h('td', { class: 'mono' }, w.url),
                    h('td', {}, badge(w.status)),
                    h('td', { class: 'mono' }, w.secret),
                    h(
                      'td',
                      { class: 'detail' },
                      w.event_types ? w.event_types.join(' ') : 'default',
                    ),
                  ),
                ),
              ),
            ]
          : null,
      ),
    ),
  )
}

function renderRehearsal() {
  const { scenario_queue: queue, faults, referee } = ui.state
  $('#rehearsal').replaceChildren(
    h('h3', {}, 'Queued scenarios'),
    queue.length
      ? table(
          ['target', 'scenario', 'times left'],
          queue.map((q) =>
            h(
              'tr',
              {},
              h('td', { class: 'mono' }, q.target_id),
              h('td', {}, q.scenario),
              h('td', { class: 'num' }, String(q.remaining)),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'none queued: executions run `succeed`'),
    h('h3', {}, 'Fault rules'),
    faults.length
      ? table(
          ['id', 'match', 'action', 'left', 'matched', 'fired'],
          faults.map((f) =>
            h(
              'tr',
              {},
              h('td', { class: 'mono' }, short(f.id)),
              h('td', { class: 'detail' }, JSON.stringify(f.match)),
              h('td', { class: 'detail' }, JSON.stringify(f.action)),
              h('td', { class: 'num' }, f.remaining === null ? '∞' : String(f.remaining)),
              h('td', { class: 'num' }, String(f.matched)),
              h('td', { class: 'num' }, String(f.fired)),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'no fault rule'),
    h('h3', {}, 'Referee findings'),
    referee.violations.length
      ? table(
          ['at', 'rule', 'requirement', 'key', 'requests'],
          referee.violations.map((v) =>
            h(
              'tr',
              {},
              h('td', {}, fmt(v.at)),
              h('td', {}, v.rule),
              h('td', {}, v.requirement_id),
              h('td', { class: 'mono' }, v.key),
              h(
                'td',
                { class: 'detail' },
                v.requests.map((r) => `${r.method} ${r.path}`).join(', '),
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'no finding'),
    referee.dropped
      ? h('p', { class: 'muted' }, `${referee.dropped} older findings dropped`)
      : null,
  )
}

// ---- start ------------------------------------------------------------------------------------------

for (const button of document.querySelectorAll('.advance button[data-seconds]'))
  button.addEventListener('click', () => advance(Number(button.dataset.seconds)))
$('#advance-next').addEventListener('click', () => advanceToNextTimer().catch(showError))
$('#mode-switch').addEventListener('click', switchMode)
for (const id of ['#filter-text', '#filter-kind', '#filter-status'])
  $(id).addEventListener('input', () => ui.state && renderExecutions())
$('#token-form').addEventListener('submit', (event) => {
  event.preventDefault()
  ui.token = $('#token').value
  sessionStorage.setItem('mock-control-token', ui.token)
  $('#token-form').hidden = true
  void follow()
})
// The clock of a realtime mock moves between changes: show it moving.
setInterval(() => ui.clock.mode === 'realtime' && renderClock(), 1000)
void follow()
