/** The conformance CLI's flags (args.ts) and the --only selection (select.ts). */
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_MAX_EXECUTIONS,
  DEFAULT_REPORT_DIR,
  DEFAULT_WEBHOOK_PORT,
  USAGE,
  isSelected,
  onlyPattern,
  parseCliArgs,
  UsageError,
} from './args.js'
import { mayHold } from './select.js'

const catalog = {
  ids: new Set(['SVC-001', 'SVC-002', 'AUTH-001']),
  areas: new Set(['SVC', 'AUTH']),
}
const parse = (args: string[], env: NodeJS.ProcessEnv = {}) => parseCliArgs(args, catalog, env)

describe('conformance CLI arguments', () => {
  it('defaults to the mock in process, no spending, the default report directory', () => {
    expect(parse([])).toEqual({
      allowSpend: false,
      maxExecutions: DEFAULT_MAX_EXECUTIONS,
      only: [],
      reportDir: DEFAULT_REPORT_DIR,
      verbose: false,
      help: false,
    })
  })

  it('reads every target, spending and report flag', () => {
    const o = parse([
      '--base-url',
      'https://api.example.com/',
      '--api-key',
      'sk_live_x',
      '--deployment',
      'd1',
      '--workflow',
      'w1',
      '--owner-token',
      'ot',
      '--allow-spend',
      '--max-executions',
      '3',
      '--max-su',
      '12.5',
      '--seed=-42',
      '--num-runs',
      '5',
      '--report-dir',
      'out',
    ])
    expect(o).toMatchObject({
      baseUrl: 'https://api.example.com',
      apiKey: 'sk_live_x',
      deployment: 'd1',
      workflow: 'w1',
      ownerToken: 'ot',
      allowSpend: true,
      maxExecutions: 3,
      maxSu: 12.5,
      seed: -42,
      numRuns: 5,
      reportDir: 'out',
    })
  })

  it('takes the key and owner token from the environment, the flags first', () => {
    const env = {
      CONFORMANCE_API_KEY: 'from-env',
      CONFORMANCE_OWNER_TOKEN: 'ot-env',
      MOCK_CONTROL_TOKEN: 'ct-env',
    }
    expect(parse(['--base-url', 'http://h'], env)).toMatchObject({
      apiKey: 'from-env',
      ownerToken: 'ot-env',
      controlToken: 'ct-env',
    })
    expect(parse(['--base-url', 'http://h', '--api-key', 'flag'], env).apiKey).toBe('flag')
    expect(parse([], env).apiKey).toBeUndefined()
  })

  it('collects --only from commas and repeats, upper-cased, each once', () => {
    expect(parse(['--only', 'svc-002,AUTH', '--only', 'SVC-002']).only).toEqual(['SVC-002', 'AUTH'])
  })

  it.each([
    [['--only', 'NOPE-001'], /neither a requirement id nor an area/],
    [['--max-executions', '3'], /need --allow-spend/],
    [['--allow-spend', '--max-executions', '0'], /positive integer/],
    [['--allow-spend', '--max-su=-1'], /positive number/],
    [['--allow-spend', '--max-su', 'x'], /positive number/],
    [['--seed', '1.5'], /integer/],
    [['--base-url', 'ftp://h'], /http/],
    [['--base-url', 'not a url'], /not a URL/],
    [['--api-key', 'k'], /needs --base-url/],
    [['--deployment', 'd'], /needs --base-url/],
    [['--bogus'], /Unknown option/],
  ])('refuses %j', (args, message) => {
    expect(() => parse(args)).toThrow(UsageError)
    expect(() => parse(args)).toThrow(message)
  })

  it('reads the baseline flags and the strictness, refusing both strict and lenient', () => {
    const o = parse(['--baseline', 'known.txt', '--write-baseline', 'new.txt', '--lenient'])
    expect(o).toMatchObject({ baseline: 'known.txt', writeBaseline: 'new.txt', strict: false })
    expect(parse(['--strict']).strict).toBe(true)
    expect(parse([]).strict).toBeUndefined()
    expect(() => parse(['--strict', '--lenient'])).toThrow(/exclude each other/)
  })

  it('takes the call rates of a deployment whose limits differ, and refuses bad values', () => {
    const base = ['--base-url', 'http://127.0.0.1:4010']
    expect(parse([...base]).callRates).toBeUndefined()
    expect(parse([...base, '--call-rates', 'accept=5,read=30']).callRates).toEqual({
      accept: 5,
      read: 30,
    })
    expect(parse([...base, '--call-rates', 'read=120']).callRates).toEqual({ read: 120 })
    for (const bad of [
      'accept=0',
      'accept=-1',
      'read=1.5',
      'read=',
      'write=3',
      'accept=2,accept=3',
      '10',
      '',
    ])
      expect(() => parse([...base, '--call-rates', bad]), bad).toThrow(UsageError)
    expect(() => parse(['--call-rates', 'accept=5'])).toThrow(/needs --base-url/)
  })

  it('takes --webhook-url (https) and --webhook-port, default the documented port', () => {
    const base = ['--base-url', 'https://api.example.com']
    expect(parse([...base])).not.toHaveProperty('webhookUrl')
    expect(parse([...base, '--webhook-url', 'https://ci.example.com/hooks/'])).toMatchObject({
      webhookUrl: 'https://ci.example.com/hooks',
      webhookPort: DEFAULT_WEBHOOK_PORT,
    })
    expect(DEFAULT_WEBHOOK_PORT).toBe(4099)
    expect(USAGE).toContain(`(default ${DEFAULT_WEBHOOK_PORT}; 0: a free port, printed)`)
    const url = ['--webhook-url', 'https://ci.example.com']
    expect(parse([...base, ...url, '--webhook-port', '0']).webhookPort).toBe(0)
    expect(parse([...base, ...url, '--webhook-port', '65535']).webhookPort).toBe(65535)
    for (const bad of ['65536', '-1', '1.5', 'x', ''])
      expect(() => parse([...base, ...url, `--webhook-port=${bad}`]), bad).toThrow(/port number/)
  })

  it('accepts an http:// --webhook-url only on a loopback address with --allow-insecure-webhook-url', () => {
    const base = ['--base-url', 'http://127.0.0.1:4010']
    const insecure = '--allow-insecure-webhook-url'
    for (const url of ['http://127.0.0.1:4100/h', 'http://localhost:4100', 'http://[::1]:4100'])
      expect(parse([...base, '--webhook-url', url, insecure]).webhookUrl).toBe(url)
    expect(() => parse([...base, '--webhook-url', 'http://127.0.0.1:4100'])).toThrow(
      /needs an https:\/\/ address.*--allow-insecure-webhook-url/,
    )
    expect(() => parse([...base, '--webhook-url', 'http://ci.example.com', insecure])).toThrow(
      /only on 127\.0\.0\.1/,
    )
    for (const [args, message] of [
      [['--webhook-url', 'ftp://ci.example.com'], /https/],
      [['--webhook-url', 'not a url'], /not a URL/],
      [['--webhook-url', 'https://ci.example.com/?a=1'], /no query/],
      [['--webhook-port', '4099'], /needs --webhook-url/],
      [[insecure], /needs --webhook-url/],
    ] as const)
      expect(() => parse([...base, ...args]), args.join(' ')).toThrow(message)
    expect(() => parse(['--webhook-url', 'https://ci.example.com'])).toThrow(/needs --base-url/)
  })

  it('returns early for --help', () => {
    expect(parse(['--help', '--max-executions', '3']).help).toBe(true)
  })
})

describe('--only selection', () => {
  it('matches title prefixes of the ids and of the areas', () => {
    const pattern = new RegExp(onlyPattern(['SVC-002', 'AUTH'])!)
    const tag = (...ids: string[]) => ids.map((id) => `[${id}]`).join('')
    expect(pattern.test(`${tag('SVC-002')} isolates`)).toBe(true)
    expect(pattern.test(`${tag('ERR-001', 'SVC-002')} both`)).toBe(true)
    expect(pattern.test(`${tag('AUTH-017')} any id of the area`)).toBe(true)
    expect(pattern.test(`${tag('SVC-001')} another id`)).toBe(false)
    expect(pattern.test(`${tag('SVC-0021')} not a prefix match`)).toBe(false)
    expect(onlyPattern([])).toBeUndefined()
  })

  it('says which requirements are selected', () => {
    expect(isSelected([], 'SVC-001')).toBe(true)
    expect(isSelected(['AUTH'], 'AUTH-009')).toBe(true)
    expect(isSelected(['SVC-002'], 'SVC-001')).toBe(false)
  })

  it('loads a test file that names a selected id, or computes ids at run time', () => {
    expect(mayHold(`it(\`\${req('SVC-002', 'X-001')} t\`)`, ['SVC-002'])).toBe(true)
    expect(mayHold(`it(\`\${req('AUTH-014')} t\`)`, ['AUTH'])).toBe(true)
    expect(mayHold(`it(\`\${req('SVC-0021')} t\`)`, ['SVC-002'])).toBe(false)
    expect(mayHold(`it(\`\${req('SVC-001')} t\`)`, ['SVC-002'])).toBe(false)
    expect(mayHold('it(`${req(...ids)} t`)', ['SVC-002'])).toBe(true)
  })
})
