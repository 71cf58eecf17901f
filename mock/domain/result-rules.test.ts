/**
 * Properties of the public result rules: credential patterns are found wherever they sit in a result
 * (OUTPUT_CONTAINS_CREDENTIALS), free text is masked without touching what is not sensitive (Data handling),
 * and URL results that are not plain public HTTPS addresses are refused (OUTPUT_URL_INVALID).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { containsCredential, maskPublicText, urlResultProblem } from './result-rules.js'

const numRuns = Number(process.env.FC_NUM_RUNS ?? 100)
const params = { numRuns, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) }

/** One credential of each family the mock recognises (README, result rules). */
const credential = fc.oneof(
  fc.stringMatching(/^AKIA[0-9A-Z]{16}$/),
  fc.stringMatching(/^(sk|rk)_(live|test)_[0-9A-Za-z]{16,30}$/),
  fc.stringMatching(/^gh[pousr]_[0-9A-Za-z]{30,40}$/),
  fc.stringMatching(/^xox[abprs]-[0-9A-Za-z]{10,20}$/),
  fc.stringMatching(/^-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----$/),
  fc.stringMatching(/^eyJ[0-9A-Za-z_]{8,20}\.eyJ[0-9A-Za-z_]{8,20}\.[0-9A-Za-z_]{8,20}$/),
  fc.stringMatching(/^([Pp]assword|passwd|SECRET|api_key|api-key|apikey)[:=] ?[0-9A-Za-z_]{6,12}$/),
)
/** Words that cannot form a credential, an e-mail address or a phone number: lowercase letters only. */
const word = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
  minLength: 1,
  maxLength: 8,
})
const words = fc.array(word, { maxLength: 6 }).map((ws) => ws.join(' '))
/** The tokens of '[credential masked]', '[email masked]' and '[phone masked]'. */
const MASK_TOKENS = new Set(['[credential', '[email', '[phone', 'masked]'])
const email = fc.stringMatching(/^[a-z0-9._]{1,8}@[a-z]{1,8}\.(com|org|de)$/)
const phone = fc.stringMatching(/^\+?[0-9]{2,3} [0-9]{3} [0-9]{4,7}$/)

/** A JSON value whose strings (keys included) are all harmless words. */
const harmless = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    words,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(word, tie('value'), { maxKeys: 3 }),
  ),
})).value

/** Puts `s` somewhere inside `v`: as a string, inside a string, or as an object key. */
function plant(v: unknown, s: string, choices: number[]): unknown {
  const [c = 0, ...rest] = choices
  if (Array.isArray(v) && v.length > 0 && c % 3 !== 0) {
    const i = c % v.length
    return v.map((x, j) => (j === i ? plant(x, s, rest) : x))
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const entries = Object.entries(v)
    if (entries.length > 0 && c % 3 === 1) {
      const i = c % entries.length
      return Object.fromEntries(entries.map(([k, x], j) => [k, j === i ? plant(x, s, rest) : x]))
    }
    if (c % 3 === 2) return Object.fromEntries([...entries, [s, 1]])
    return Object.fromEntries([...entries, ['note', `see ${s} here`]])
  }
  if (typeof v === 'string' && c % 2 === 0) return `${v} ${s} ${v}`
  return [v, s]
}

describe('public result rules', () => {
  it('[ERR-104][STATE-017] finds a credential pattern wherever it sits in a result: text, nested JSON value or key', () => {
    fc.assert(
      fc.property(
        harmless,
        credential,
        fc.array(fc.nat(), { maxLength: 8 }),
        (v, cred, choices) => {
          expect(containsCredential(v)).toBe(false)
          expect(containsCredential(cred)).toBe(true)
          expect(containsCredential(plant(v, cred, choices))).toBe(true)
        },
      ),
      params,
    )
  })

  it.each([
    ['key AKIAJ7QX2LMN4PRT5V68 555 123 4567', 'key [credential masked] [phone masked]'],
    [
      'tok ghp_abcdefghijklmnopqrstuvwxyz123456 (555) 123-4567',
      'tok [credential masked] [phone masked]',
    ],
    ['password: abc123 555 123 4567', '[credential masked] [phone masked]'],
    ['sk_live_ABCDEFGHIJKLMNOP12 +1 555 123 4567', '[credential masked] [phone masked]'],
    ['ref AB1234567890 call 555 123 4567', 'ref AB1234567890 call [phone masked]'],
  ])(
    '[DATA-002] masks a credential ending in digits next to a phone number whole: %s',
    (text, masked) => {
      expect(maskPublicText(text)).toBe(masked)
    },
  )

  it('[DATA-002] masks every credential, e-mail address and phone number in free text and keeps the other words in order', () => {
    const sensitive = fc.oneof(credential, email, phone)
    fc.assert(
      // Sensitive items may sit next to each other (no word between): a credential ending in digits directly
      // followed by a phone number is masked whole.
      fc.property(fc.array(fc.tuple(words, sensitive), { maxLength: 5 }), words, (parts, tail) => {
        const text = [...parts.flatMap(([w, s]) => [w, s]), tail].join(' ')
        const masked = maskPublicText(text)
        expect(containsCredential(masked)).toBe(false)
        expect(masked).not.toMatch(/@/)
        expect(masked).not.toMatch(/\d{4}/)
        for (const [, s] of parts) expect(masked).not.toContain(s)
        // No fragment of a sensitive item is left in clear: every token is a word or part of a mask.
        const kept = new Set([...parts.map(([w]) => w), tail].flatMap((w) => w.split(' ')))
        for (const token of masked.split(' ').filter((t) => t !== ''))
          expect(kept.has(token) || MASK_TOKENS.has(token), `"${token}" in "${masked}"`).toBe(true)
        let from = 0
        for (const w of [...parts.map(([w]) => w), tail]) {
          const at = masked.indexOf(w, from)
          expect(at).toBeGreaterThanOrEqual(0)
          from = at + w.length
        }
        expect(maskPublicText(masked)).toBe(masked)
      }),
      params,
    )
  })

  it('[DATA-002] leaves free text without contact details or credentials unchanged', () => {
    fc.assert(
      fc.property(words, (text) => {
        expect(maskPublicText(text)).toBe(text)
      }),
      params,
    )
  })

  it('[ERR-103] refuses a URL result that is not HTTPS, carries login details or a token parameter, or names an internal host', () => {
    const octet = fc.integer({ min: 0, max: 255 })
    const internalHost = fc.oneof(
      fc.constantFrom('localhost', 'LOCALHOST', 'metadata', 'metadata.google.internal', '[::1]'),
      fc.tuple(octet, octet, octet).map(([a, b, c]) => `10.${a}.${b}.${c}`),
      fc.tuple(octet, octet, octet).map(([a, b, c]) => `127.${a}.${b}.${c}`),
      fc.tuple(octet, octet).map(([a, b]) => `192.168.${a}.${b}`),
      fc
        .tuple(fc.integer({ min: 16, max: 31 }), octet, octet)
        .map(([a, b, c]) => `172.${a}.${b}.${c}`),
      fc.tuple(octet, octet).map(([a, b]) => `169.254.${a}.${b}`),
      fc
        .tuple(word, fc.constantFrom('local', 'internal', 'localhost'))
        .map(([w, t]) => `${w}.${t}`),
      fc
        .tuple(fc.constantFrom('fc', 'fd'), fc.stringMatching(/^[0-9a-f]{2}$/), fc.nat(0xffff))
        .map(([p, q, n]) => `[${p}${q}::${n.toString(16)}]`),
      fc.nat(0xffff).map((n) => `[fe80::${n.toString(16)}]`),
    )
    const publicHost = fc.constantFrom('example.com', 'www.example.org', 'cdn.example.net')
    const pathPart = fc.array(word, { maxLength: 3 }).map((ws) => `/${ws.join('/')}`)
    const tokenName = fc
      .constantFrom(
        'token',
        'access_token',
        'sig',
        'signature',
        'X-Amz-Signature',
        'X-Amz-Credential',
        'key',
        'api_key',
        'apikey',
        'auth',
        'password',
      )
      .chain((n) => fc.constantFrom(n, n.toUpperCase(), n.toLowerCase()))
    fc.assert(
      fc.property(
        internalHost,
        publicHost,
        pathPart,
        tokenName,
        word,
        fc.constantFrom('http', 'ftp', 'ws', 'file', 'javascript', 'data'),
        (internal, host, p, token, value, scheme) => {
          expect(urlResultProblem(`https://${internal}${p}`)).toBe('OUTPUT_URL_INVALID')
          expect(urlResultProblem(`https://${host}${p}?page=2&${token}=${value}`)).toBe(
            'OUTPUT_URL_INVALID',
          )
          expect(urlResultProblem(`https://${value}@${host}${p}`)).toBe('OUTPUT_URL_INVALID')
          expect(urlResultProblem(`https://${value}:${value}@${host}${p}`)).toBe(
            'OUTPUT_URL_INVALID',
          )
          expect(urlResultProblem(`${scheme}://${host}${p}`)).toBe('OUTPUT_URL_INVALID')
          expect(urlResultProblem(`${host}${p}`)).toBe('OUTPUT_URL_INVALID')
        },
      ),
      params,
    )
  })

  it.each([
    // Internal names, whatever their case and trailing dots.
    'https://localhost./',
    'https://localhost../x',
    'https://api.localhost./',
    'https://printer.local../',
    'https://metadata.google.internal./computeMetadata/v1/',
    'https://metadata./',
    'https://intranet/',
    // Internal addresses in every spelling the URL parser accepts.
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/latest/meta-data',
    'https://[::]/',
    'https://0.0.0.0/',
    'https://0x7f.0.0.1../',
    'https://127.0.0.1../',
    'https://2130706433/',
    'https://100.64.0.1/',
    'https://[64:ff9b::7f00:1]/',
    'https://[64:ff9b:1::808:808]/',
    'https://[2002:a9fe:a9fe::]/',
    'https://[fd00:ec2::254]/',
    'https://[fe80::1]/',
    'https://[2001:db8::1]/',
    // The other URL rules.
    'http://fcc.gov/',
    'https://user@fcc.gov/',
    'https://fcc.gov/?X-Amz-Signature=abc',
  ])('[ERR-103] refuses the URL result %s', (url) => {
    expect(urlResultProblem(url)).toBe('OUTPUT_URL_INVALID')
  })

  it.each([
    // Public names that only look like internal addresses.
    'https://fcc.gov/',
    'https://fdic.gov/x',
    'https://fd.io/',
    'https://fe80.example.com/',
    'https://fc00.example.net/',
    'https://10.example.com/',
    'https://127.0.0.1.example.com/',
    'https://192.168.example.org/',
    'https://local.example.com/',
    'https://metadata.example.com/',
    'https://EXAMPLE.COM./',
    // Public addresses, IPv4-mapped and 6to4 forms of public IPv4 addresses included.
    'https://8.8.8.8/',
    'https://[2606:4700:4700::1111]/',
    'https://[::ffff:8.8.8.8]/',
    'https://[2002:808:808::1]/',
  ])('[ERR-103] accepts the URL result %s', (url) => {
    expect(urlResultProblem(url)).toBeUndefined()
  })

  it('[ERR-103] accepts an HTTPS URL on a public host whatever its path and non-secret query parameters', () => {
    // The hosts are fixed public names and addresses, look-alikes of internal ones included: the property is
    // about paths and queries (the address classes have their own table in mock/webhooks/network-rules.test.ts).
    const publicHost = fc.constantFrom(
      'example.com',
      'www.example.org',
      'cdn.example.net',
      '93.184.215.14',
      'fcc.gov',
      'fdic.gov',
      'fd.io',
      '10.example.com',
      '[2606:4700:4700::1111]',
    )
    const segment = fc.string({
      unit: fc.constantFrom(..."abcXYZ019-._~!$&'()*+,;=:@", '%20', '%2F', 'é'),
      maxLength: 10,
    })
    fc.assert(
      fc.property(
        publicHost,
        fc.array(segment, { maxLength: 4 }),
        fc.array(
          fc.tuple(
            word.map((w) => `q_${w}`),
            segment,
          ),
          { maxLength: 4 },
        ),
        fc.option(segment, { nil: undefined }),
        (host, segments, query, fragment) => {
          const q = query.map(([k, v]) => `${k}=${v}`).join('&')
          const url = `https://${host}/${segments.join('/')}${q ? `?${q}` : ''}${fragment === undefined ? '' : `#${fragment}`}`
          expect(urlResultProblem(url)).toBeUndefined()
        },
      ),
      params,
    )
  })
})
