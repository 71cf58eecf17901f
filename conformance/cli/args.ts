/** The conformance CLI's flags: parsed, checked, and turned into what the run needs (a test-name pattern). */
import { parseArgs } from 'node:util'
import { parseCallRates } from '../support/pace.js'

export const DEFAULT_WEBHOOK_PORT = 4099

export const USAGE = `usage: npm run conformance -- [options]

Runs the conformance suite against a target and writes a report per requirement.

target (default: the mock in this process)
  --base-url <url>          the service to test (a real deployment, or a mock started with \`npm start\`)
  --api-key <key>           API key with every scope (or env CONFORMANCE_API_KEY); needed for a real target
  --deployment <id>         the Deployment to use (default: the first ACTIVE one the key lists)
  --workflow <id>           a Workflow to run (the Workflow and Run tests are skipped without one)
  --owner-token <token>     owner login token for webhook management (or env CONFORMANCE_OWNER_TOKEN)
  --world <file>            a world file (conformance/support/world.ts) giving further roles: more keys, another
                            Project's ids; the flags above take precedence
  --control-token <token>   the mock's control-API token, when it was started with --control-token
                            (or env MOCK_CONTROL_TOKEN)

spending (real targets only: without --allow-spend no execution is started and no file uploaded)
  --allow-spend             let tests start executions and upload files
  --max-executions <n>      at most n accepted executions (default 20)
  --max-su <x>              at most x SU reserved: each execution reserves its limits.max_su or 100 SU

webhooks (real targets only: without --webhook-url the delivery tests run on a mock only)
  --webhook-url <url>       a public HTTPS address the CI forwards (a tunnel, an ingress), with every path under it,
                            to the suite's webhook receiver on 127.0.0.1; the suite registers an endpoint under it,
                            starts an execution (needs --allow-spend and --owner-token) and checks the target's
                            real deliveries: the Service-Signature format, the HMAC over the raw bytes, the
                            300-second window, the body's size and fields, a retry after a 500 (up to 3 minutes);
                            the endpoint is then deleted (an assumed path: if the target refuses, a warning)
  --webhook-port <n>        the receiver's port on 127.0.0.1 (default ${DEFAULT_WEBHOOK_PORT}; 0: a free port, printed)
  --allow-insecure-webhook-url
                            accept an http:// --webhook-url on a loopback address (127.0.0.1, [::1], localhost): for
                            tests of the suite itself, whose target is a mock; a real target delivers only to HTTPS

pacing (real targets only)
  --call-rates accept=<n>,read=<m>
                            the deployment's call rates per minute when they differ from the document's
                            (default accept=10,read=60); either may be given alone

selection and reports
  --only <ids>              requirement ids or areas, comma-separated (SVC-002,AUTH or --only SVC-002 --only AUTH);
                            an area also takes the rules of States, Codes, Sizes, Retention, ... that name its
                            resource (RUN: STATE-011, the cancel of an ended Run)
  --seed <n>                fast-check seed (default: a new one, printed); the same seed replays the run
  --num-runs <n>            fast-check examples per property (default: each test's own, mostly 25); fewer
                            keeps a paced real-target run short, more searches deeper
  --report-dir <dir>        where junit.xml, requirements.md, requirements.json and failures.har go
                            (default ./conformance-report)
  --baseline <file>         expected failures: requirement ids the target is known not to meet yet; only failures
                            outside it fail the run, and the report names baselined ids that now pass
  --write-baseline <file>   write this run's failed requirement ids to a baseline file
  --strict | --lenient      an undocumented response field fails the check (strict) or is a warning (lenient);
                            default: strict against the mock, lenient against a real deployment
  --verbose                 vitest's own report as well (every test, full failure output)
  --help                    this text

on a real target the executions the run started and that have not ended are canceled at its end and on
SIGINT/SIGTERM (Runs: cancel; Sessions with a running Turn: delete)

exit status: 0 every selected check passed (and at least one ran), 1 a check failed or none ran,
             2 bad flags or the target cannot be used (unreachable, key refused), 130/143 interrupted`

export class UsageError extends Error {}

export type CliOptions = {
  baseUrl?: string
  apiKey?: string
  deployment?: string
  workflow?: string
  ownerToken?: string
  world?: string
  controlToken?: string
  allowSpend: boolean
  maxExecutions: number
  maxSu?: number
  /** Calls per minute the pacer keeps, per class, when the deployment's limits differ from the document's. */
  callRates?: Partial<Record<'accept' | 'read', number>>
  /** Requirement ids and area prefixes, upper-case. */
  only: string[]
  seed?: number
  numRuns?: number
  reportDir: string
  baseline?: string
  writeBaseline?: string
  /** Undocumented response fields fail (true) or warn (false); undefined: by target kind. */
  strict?: boolean
  verbose: boolean
  help: boolean
}

/**
 * What parseCliArgs gives: CliOptions and the webhook flags. They are kept apart from CliOptions, whose every key
 * the package's run() (conformance/index.ts) maps to a flag: run() does not take them yet.
 */
export type ParsedCliOptions = CliOptions & {
  /** The public address forwarded to the suite's webhook receiver (TARGET_WEBHOOK_URL). */
  webhookUrl?: string
  /** Where that receiver listens on 127.0.0.1 (TARGET_WEBHOOK_PORT; 0: a free port). Set with webhookUrl. */
  webhookPort?: number
}

export type Catalog = { ids: ReadonlySet<string>; areas: ReadonlySet<string> }

export const DEFAULT_MAX_EXECUTIONS = 20
export const DEFAULT_REPORT_DIR = 'conformance-report'

const positiveInteger = (flag: string, text: string): number => {
  const n = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} needs a positive integer, got "${text}"`)
  return n
}

/** Loopback host names an http:// --webhook-url may have with --allow-insecure-webhook-url. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])

/**
 * --webhook-url: an https:// address (Webhook notifications, rule 10: a real target delivers only to HTTPS); an
 * http:// one only on a loopback address and with --allow-insecure-webhook-url (the suite's own tests: a mock
 * started with --allow-insecure-webhooks plays the real target). Without a trailing slash.
 */
function webhookUrl(text: string, allowInsecure: boolean): string {
  let parsed: URL
  try {
    parsed = new URL(text)
  } catch {
    throw new UsageError(`--webhook-url is not a URL: "${text}"`)
  }
  if (parsed.search || parsed.hash)
    throw new UsageError(
      `--webhook-url takes no query or fragment (the suite adds a path per endpoint), got "${text}"`,
    )
  if (parsed.protocol === 'http:') {
    if (!allowInsecure || !LOOPBACK_HOSTS.has(parsed.hostname))
      throw new UsageError(
        `--webhook-url needs an https:// address (a real target delivers only to public HTTPS addresses), got "${text}"` +
          (allowInsecure
            ? '; http:// is accepted only on 127.0.0.1, [::1] or localhost'
            : '; http:// on a loopback address needs --allow-insecure-webhook-url (tests of the suite)'),
      )
  } else if (parsed.protocol !== 'https:')
    throw new UsageError(`--webhook-url needs an https:// address, got "${text}"`)
  return text.replace(/\/+$/, '')
}

/** Parses the CLI's arguments (after `--`); env supplies the secrets that should not be on a command line. */
export function parseCliArgs(
  argv: readonly string[],
  catalog: Catalog,
  env: NodeJS.ProcessEnv = {},
): ParsedCliOptions {
  let values
  try {
    ;({ values } = parseArgs({
      args: [...argv],
      options: {
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        deployment: { type: 'string' },
        workflow: { type: 'string' },
        'owner-token': { type: 'string' },
        world: { type: 'string' },
        'control-token': { type: 'string' },
        'allow-spend': { type: 'boolean', default: false },
        'max-executions': { type: 'string' },
        'max-su': { type: 'string' },
        'call-rates': { type: 'string' },
        'webhook-url': { type: 'string' },
        'webhook-port': { type: 'string' },
        'allow-insecure-webhook-url': { type: 'boolean', default: false },
        only: { type: 'string', multiple: true },
        seed: { type: 'string' },
        'num-runs': { type: 'string' },
        'report-dir': { type: 'string' },
        baseline: { type: 'string' },
        'write-baseline': { type: 'string' },
        strict: { type: 'boolean' },
        lenient: { type: 'boolean' },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  const options: ParsedCliOptions = {
    allowSpend: values['allow-spend'],
    maxExecutions: DEFAULT_MAX_EXECUTIONS,
    only: [],
    reportDir: values['report-dir'] ?? DEFAULT_REPORT_DIR,
    verbose: values.verbose,
    help: values.help,
  }
  if (options.help) return options

  const baseUrl = values['base-url']
  if (baseUrl !== undefined) {
    let parsed: URL
    try {
      parsed = new URL(baseUrl)
    } catch {
      throw new UsageError(`--base-url is not a URL: "${baseUrl}"`)
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new UsageError(`--base-url needs http:// or https://, got "${baseUrl}"`)
    options.baseUrl = baseUrl.replace(/\/+$/, '')
  }
  const apiKey = values['api-key'] ?? (env.CONFORMANCE_API_KEY || undefined)
  const ownerToken = values['owner-token'] ?? (env.CONFORMANCE_OWNER_TOKEN || undefined)
  const targetOnly = {
    '--api-key': apiKey !== undefined && values['api-key'] !== undefined,
    '--deployment': values.deployment !== undefined,
    '--workflow': values.workflow !== undefined,
    '--owner-token': values['owner-token'] !== undefined,
    '--world': values.world !== undefined,
    '--control-token': values['control-token'] !== undefined,
    '--call-rates': values['call-rates'] !== undefined,
    '--webhook-url': values['webhook-url'] !== undefined,
  }
  for (const [flag, given] of Object.entries(targetOnly)) {
    if (given && !options.baseUrl)
      throw new UsageError(
        `${flag} needs --base-url (without it the suite runs on a mock in process)`,
      )
  }
  if (options.baseUrl) {
    if (apiKey !== undefined) options.apiKey = apiKey
    if (ownerToken !== undefined) options.ownerToken = ownerToken
    if (values.deployment !== undefined) options.deployment = values.deployment
    if (values.workflow !== undefined) options.workflow = values.workflow
    if (values.world !== undefined) options.world = values.world
    const controlToken = values['control-token'] ?? (env.MOCK_CONTROL_TOKEN || undefined)
    if (controlToken !== undefined) options.controlToken = controlToken
  }

  if (values['max-executions'] !== undefined || values['max-su'] !== undefined) {
    if (!options.allowSpend)
      throw new UsageError('--max-executions and --max-su bound spending: they need --allow-spend')
  }
  if (values['max-executions'] !== undefined)
    options.maxExecutions = positiveInteger('--max-executions', values['max-executions'])
  if (values['max-su'] !== undefined) {
    const text = values['max-su']
    const x = Number(text)
    if (!/^\d+(\.\d+)?$/.test(text) || !(x > 0))
      throw new UsageError(`--max-su needs a positive number, got "${text}"`)
    options.maxSu = x
  }

  if (values['call-rates'] !== undefined) {
    try {
      options.callRates = parseCallRates(values['call-rates'], '--call-rates')
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
  }

  if (values['webhook-url'] !== undefined) {
    options.webhookUrl = webhookUrl(values['webhook-url'], values['allow-insecure-webhook-url'])
    options.webhookPort = DEFAULT_WEBHOOK_PORT
  } else if (values['webhook-port'] !== undefined || values['allow-insecure-webhook-url'])
    throw new UsageError(
      `${values['webhook-port'] !== undefined ? '--webhook-port' : '--allow-insecure-webhook-url'} needs --webhook-url`,
    )
  if (values['webhook-port'] !== undefined) {
    const text = values['webhook-port']
    const n = Number(text)
    if (!/^\d+$/.test(text) || n > 65535)
      throw new UsageError(`--webhook-port needs a port number 0 to 65535, got "${text}"`)
    options.webhookPort = n
  }

  for (const item of (values.only ?? []).flatMap((s) => s.split(/[\s,]+/))) {
    if (!item) continue
    const id = item.toUpperCase()
    if (!catalog.ids.has(id) && !catalog.areas.has(id))
      throw new UsageError(
        `--only: "${item}" is neither a requirement id nor an area of spec/requirements.yaml`,
      )
    if (!options.only.includes(id)) options.only.push(id)
  }

  if (values.baseline !== undefined) options.baseline = values.baseline
  if (values['write-baseline'] !== undefined) options.writeBaseline = values['write-baseline']
  if (values.strict && values.lenient)
    throw new UsageError('--strict and --lenient exclude each other')
  if (values.strict) options.strict = true
  if (values.lenient) options.strict = false

  if (values['num-runs'] !== undefined)
    options.numRuns = positiveInteger('--num-runs', values['num-runs'])
  if (values.seed !== undefined) {
    const seed = Number(values.seed)
    if (!/^-?\d+$/.test(values.seed) || !Number.isSafeInteger(seed))
      throw new UsageError(`--seed needs an integer, got "${values.seed}"`)
    options.seed = seed
  }
  return options
}

// The selection's rule lives in select.ts (an area also selects the requirements naming its resource).
export { isSelected, onlyPattern } from './select.js'
