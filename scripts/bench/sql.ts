/**
 * `npm run bench:sql`: the SQL of a fresh-key Session creation alone, counted in instructions. It records the
 * statements of N creations in process (text, method, parameters, inside the request's transaction or not;
 * the bench world, after a reset), then replays them on a copy of the store they started from, in a node
 * process under valgrind (callgrind), and reports SQLite's instructions per creation: better-sqlite3's run,
 * get and all, binding included. First with every statement, then (unless --no-breakdown) with each statement
 * text run by one creation in ten or more left out in turn, which gives what each costs, roughly: a statement
 * left out changes what the next ones find. A count, not a time: it does not move with the machine's load, so a change of the store's schema or
 * statements can be judged by it on a busy machine (edit, run again, compare). It does not see the rest of a
 * request (`npm run bench:instructions` does). Needs valgrind.
 *
 * Options: --amount <n> creations recorded (default 4500; at most the bench world's waiting caps), --warm <n>
 * of them replayed before counting starts (default 500), --no-breakdown, --cache: callgrind also simulates the
 * caches and each count is an estimate of cycles, instructions plus 10 per first-level miss and 100 per
 * last-level miss (cachegrind's rule of thumb): a write to a random place of an index misses where an
 * append does not, which instructions alone do not show (slower: about twice the time).
 */
import { execFile, execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createMock } from '../../mock/index.js'
import { openDb } from '../../mock/store/db.js'
import { ROOT } from './targets.js'
import { FRESH_TARGETS, SESSION_BODY, WAITING_CAP, writeBenchWorld } from './world.js'

const { values } = parseArgs({
  options: {
    amount: { type: 'string', default: '4500' },
    warm: { type: 'string', default: '500' },
    'no-breakdown': { type: 'boolean', default: false },
    cache: { type: 'boolean', default: false },
    // Internal: the replaying process (under valgrind) of a trace file, leaving out one statement text.
    replay: { type: 'string' },
    skip: { type: 'string' },
  },
})
const log = (line: string) => process.stdout.write(`${line}\n`)

type Param = string | number | null
/** One statement run: its SQL text's index, the method, its parameters, and whether a transaction was open. */
type Call = [sql: number, method: 'run' | 'get' | 'all', params: Param[], inTx: boolean]
type Trace = { image: string; sqls: string[]; requests: Call[][] }

if (values.replay) replay(values.replay, values.skip === undefined ? -1 : Number(values.skip))
else await main()

/** Records the trace, then counts its replay with every statement and without each. */
async function main(): Promise<void> {
  const amount = Number(values.amount)
  const warm = Number(values.warm)
  if (!(amount > warm && amount <= WAITING_CAP * FRESH_TARGETS.length))
    throw new Error(
      `--amount must be above --warm and at most ${WAITING_CAP * FRESH_TARGETS.length}`,
    )
  try {
    execFileSync('valgrind', ['--version'])
  } catch {
    process.stderr.write('bench:sql: needs valgrind (Debian: apt-get install valgrind)\n')
    process.exit(1)
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-sql-'))
  try {
    const trace = await record(amount)
    const file = join(dir, 'trace.json')
    writeFileSync(file, JSON.stringify(trace))
    const counted = amount - warm
    const all = await counts(dir, file, -1)
    const unit = values.cache ? 'estimated cycles' : 'instructions'
    log(
      `${amount} creations recorded, the last ${counted} counted: ${(all.native / counted / 1000).toFixed(1)}k SQLite ${unit} per creation (${(all.total / counted / 1000).toFixed(1)}k in the replaying process)`,
    )
    if (values['no-breakdown']) return
    const perRequest = (i: number) =>
      trace.requests.reduce((n, r) => n + r.filter((c) => c[0] === i).length, 0) / amount
    // Statements run by at most one creation in ten (cached reads, admissions) are not worth a replay each.
    const frequent = trace.sqls.map((_, i) => i).filter((i) => perRequest(i) >= 0.1)
    log('')
    log(`| statement (left out) | runs per creation | k ${unit} per creation |`)
    log('|---|---:|---:|')
    for (const i of frequent) {
      const without = await counts(dir, file, i)
      const text = trace.sqls[i]!.replace(/\s+/g, ' ').slice(0, 90)
      log(
        `| ${text} | ${perRequest(i).toFixed(2)} | ${((all.native - without.native) / counted / 1000).toFixed(1)} |`,
      )
    }
    log(
      `(${trace.sqls.length - frequent.length} statements run by fewer than one creation in ten not left out)`,
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The statements of `amount` fresh-key creations after a reset, and the store image they started from. */
async function record(amount: number): Promise<Trace> {
  const mock = await createMock({ fixtures: writeBenchWorld(), rateLimits: false })
  try {
    await mock.reset()
    const db = mock.deps.db
    const image = db.raw.serialize().toString('base64')
    const sqls: string[] = []
    const index = new Map<string, number>()
    let calls: Call[] = []
    const stmt = db.stmt.bind(db)
    const wrapped = new Map<string, ReturnType<typeof stmt>>()
    ;(db as { stmt: typeof db.stmt }).stmt = (sql: string) => {
      let w = wrapped.get(sql)
      if (w) return w
      const s = stmt(sql)
      if (!index.has(sql)) index.set(sql, sqls.push(sql) - 1)
      const i = index.get(sql)!
      // A proxy: the statement's other members (getters of the native object) keep it as `this`.
      w = new Proxy(s, {
        get(target, key) {
          const value = Reflect.get(target, key, target) as unknown
          // Other methods (raw, pluck, iterate, …) run on the native statement itself: a native method called
          // with the proxy as `this` throws "Illegal invocation".
          if (key !== 'run' && key !== 'get' && key !== 'all')
            return typeof value === 'function' ? (value as () => unknown).bind(target) : value
          return (...params: unknown[]) => {
            calls.push([i, key, named(params), db.raw.inTransaction])
            return (value as (...a: unknown[]) => unknown).apply(target, params)
          }
        },
      })
      wrapped.set(sql, w)
      return w
    }
    const requests: Call[][] = []
    for (let n = 0; n < amount; n++) {
      const to = FRESH_TARGETS[n % FRESH_TARGETS.length]!
      calls = []
      const res = await mock.app.request(to.path, {
        method: 'POST',
        headers: {
          Authorization: to.authorization,
          'Content-Type': 'application/json',
          'Idempotency-Key': `bench-sql-${n}`,
        },
        body: SESSION_BODY,
      })
      if (res.status !== 202) throw new Error(`creation ${n}: ${res.status} ${await res.text()}`)
      requests.push(calls)
    }
    return { image, sqls, requests }
  } finally {
    mock.close()
  }
}

/** A call's parameters as recorded: one object of named parameters is copied (the caller may reuse it). */
function named(params: unknown[]): Param[] {
  return params.length === 1 && typeof params[0] === 'object' && params[0] !== null
    ? [Object.assign({}, params[0]) as unknown as Param]
    : (params as Param[])
}

/** Replays the trace under callgrind (leaving out statement `skip`, or none): instructions counted. */
async function counts(
  dir: string,
  file: string,
  skip: number,
): Promise<{ native: number; total: number }> {
  const out = join(dir, `cg-${skip + 1}`)
  await new Promise<void>((done, fail) =>
    execFile(
      'valgrind',
      [
        '--tool=callgrind',
        '--instr-atstart=no',
        ...(values.cache ? ['--cache-sim=yes'] : []),
        `--callgrind-out-file=${out}.%p`,
        process.execPath,
        '--import',
        'tsx',
        join(ROOT, 'scripts/bench/sql.ts'),
        '--replay',
        file,
        '--warm',
        String(values.warm),
        `--skip=${skip}`,
      ],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
      (error, _stdout, stderr) => (error ? fail(new Error(`${error.message}\n${stderr}`)) : done()),
    ),
  )
  // The replaying process dumps once, after its counted creations: <out>.<pid>.1.
  const dump = readdirSync(dir)
    .map((f) => join(dir, f))
    .find((f) => f.startsWith(`${out}.`) && f.endsWith('.1'))
  if (!dump) throw new Error(`no callgrind dump ${out}.<pid>.1`)
  const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', dump], {
    maxBuffer: 64 * 1024 * 1024,
  }).toString()
  // The event columns: Ir alone, or with --cache Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
  const events = (/^Events shown:\s+(.+)$/m.exec(annotated)?.[1] ?? 'Ir').trim().split(/\s+/)
  const cost = (columns: string): number => {
    const n = columns
      .trim()
      .split(/\s+/)
      .map((c) => Number(c.replace(/,/g, '')))
    const at = (e: string) => n[events.indexOf(e)] ?? 0
    return (
      at('Ir') +
      10 * (at('I1mr') + at('D1mr') + at('D1mw')) +
      100 * (at('ILmr') + at('DLmr') + at('DLmw'))
    )
  }
  // A line: the counts (each "n" or "n (p%)"), then the function; read line by line (a pattern over the whole
  // output would backtrack at length on the lines that do not match).
  const countsOf = (line: string, name: string) =>
    cost(line.slice(0, line.indexOf(name)).replace(/\([^)]*\)/g, ' '))
  let total = NaN
  let native = 0
  for (const line of annotated.split('\n')) {
    if (line.includes('PROGRAM TOTALS')) total = countsOf(line, 'PROGRAM TOTALS')
    const fn = /\S*Statement::JS_(?:run|get|all)\(/.exec(line)
    if (fn) native += countsOf(line, fn[0])
  }
  for (const f of readdirSync(dir)) if (f.startsWith(`cg-${skip + 1}.`)) rmSync(join(dir, f))
  return { native, total }
}

/** The replaying process: a copy of the recorded store, every creation's statements run as recorded. */
function replay(file: string, skip: number): void {
  const trace = JSON.parse(readFileSync(file, 'utf8')) as Trace
  const imageFile = `${file}.db`
  writeFileSync(imageFile, Buffer.from(trace.image, 'base64'))
  // A new store as the mock opens one (its schema, pragmas and statement binding), holding the image's rows.
  const db = openDb()
  db.raw.exec(`ATTACH '${imageFile}' AS image`)
  // The image's rows were checked by the mock; copied table by table, they are not checked again (SQLite's
  // count of deferred violations does not come back to zero over this copy, though no row violates a key).
  db.raw.pragma('foreign_keys = OFF')
  db.tx(() => {
    db.clearWorld()
    for (const table of db.worldTables())
      db.raw.exec(`INSERT INTO main."${table}" SELECT * FROM image."${table}"`)
    db.raw.exec(
      'DELETE FROM main.sqlite_sequence; INSERT INTO main.sqlite_sequence SELECT * FROM image.sqlite_sequence',
    )
  })
  db.raw.pragma('foreign_keys = ON')
  db.raw.exec('DETACH image')
  const run = ([i, method, params]: Call) => {
    if (i !== skip) (db.stmt(trace.sqls[i]!)[method] as (...a: Param[]) => unknown)(...params)
  }
  const warm = Number(values.warm)
  const callgrind = (...args: string[]) =>
    execFileSync('callgrind_control', [...args, String(process.pid)], { stdio: 'ignore' })
  trace.requests.forEach((calls, n) => {
    if (n === warm) {
      callgrind('--zero')
      callgrind('--instr=on')
    }
    // Calls made inside the request's transaction are replayed inside one, the others on their own.
    for (let k = 0; k < calls.length;) {
      let end = k
      while (end < calls.length && calls[end]![3] === calls[k]![3]) end++
      if (calls[k]![3]) db.tx(() => calls.slice(k, end).forEach(run))
      else calls.slice(k, end).forEach(run)
      k = end
    }
  })
  callgrind('--instr=off')
  callgrind('--dump')
  db.close()
}
