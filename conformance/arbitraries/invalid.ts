/**
 * One-violation mutations of a valid Session creation body (bodies.ts), each paired with the code the interface
 * document gives it: an undeclared field or a wrong shape or type is INVALID_INPUT ("Undeclared body fields are
 * refused (INVALID_INPUT)"); a limits value above its maximum or not greater than 0 is LIMIT_OUT_OF_RANGE;
 * metadata beyond its bounds is INVALID_INPUT. Mutations that rest on an x-assumed choice of spec/openapi.yaml
 * say so in `assumed` and run only on a mock target.
 */
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import {
  LIMIT_NAMES,
  SESSION_BOUNDS,
  chars,
  metadataKey,
  metadataValue,
  sessionBody,
  type LimitName,
  type SessionBody,
} from './bodies.js'

export type BodyViolation = {
  label: string
  body: unknown
  code: 'INVALID_INPUT' | 'LIMIT_OUT_OF_RANGE'
  /** Requirement ids of spec/requirements.yaml the mutation exercises. */
  requirements: string[]
  /** Set when the expected answer rests on an x-assumed choice (the test then runs only on a mock). */
  assumed?: string
}

type Mutation = fc.Arbitrary<(base: SessionBody) => Omit<BodyViolation, 'body'> & { body: unknown }>

const fieldName = (declared: string[]) =>
  fc
    .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 })
    .filter((n) => !declared.includes(n) && n !== '__proto__')

/** Any JSON value that is not a string. */
const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
)
/** Any JSON value that is not an object. */
const notAnObject = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 10 }),
  fc.array(fc.integer(), { maxLength: 3 }),
)
/** Any JSON value that is not an array (null left out: an explicit null may read as "absent"). */
const notAnArray = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 10 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
)

const withItem = (base: SessionBody, index: number, item: unknown) => {
  const input: unknown[] = [...base.input]
  input[index % input.length] = item
  return { ...base, input }
}
const withLimit = (base: SessionBody, name: string, value: unknown) => ({
  ...base,
  limits: { ...base.limits, [name]: value },
})

const MUTATIONS: Mutation[] = [
  fc
    .tuple(fieldName(['input', 'limits', 'metadata']), fc.jsonValue())
    .map(([name, value]) => (base) => ({
      label: `undeclared top-level field ${JSON.stringify(name)}`,
      body: { ...base, [name]: value },
      code: 'INVALID_INPUT',
      requirements: ['EP-002'],
    })),
  fc
    .tuple(fc.nat(), fieldName(['type', 'text']), fc.jsonValue())
    .map(([i, name, value]) => (base) => ({
      label: `undeclared field ${JSON.stringify(name)} in a TEXT item`,
      body: withItem(base, i, { ...base.input[i % base.input.length], [name]: value }),
      code: 'INVALID_INPUT',
      requirements: ['SES-004', 'EP-002'],
    })),
  fc
    .tuple(fc.nat(), fieldName(['type', 'file_id']), fc.jsonValue())
    .map(([i, name, value]) => (base) => ({
      label: `undeclared field ${JSON.stringify(name)} in a FILE item`,
      body: withItem(base, i, { type: 'FILE', file_id: randomUUID(), [name]: value }),
      code: 'INVALID_INPUT',
      requirements: ['SES-005'],
    })),
  fc
    .tuple(
      fc.nat(),
      fc
        .string({ unit: 'grapheme-ascii', maxLength: 10 })
        .filter((t) => t !== 'TEXT' && t !== 'FILE'),
    )
    .map(([i, type]) => (base) => ({
      label: `input item of type ${JSON.stringify(type)}`,
      body: withItem(base, i, { type, text: 'hello' }),
      code: 'INVALID_INPUT',
      requirements: ['SES-004'],
    })),
  fc.nat().map((i) => (base) => ({
    label: 'TEXT item without text',
    body: withItem(base, i, { type: 'TEXT' }),
    code: 'INVALID_INPUT',
    requirements: ['SES-004'],
  })),
  fc.tuple(fc.nat(), notAString).map(([i, text]) => (base) => ({
    label: `TEXT item whose text is ${JSON.stringify(text)}`,
    body: withItem(base, i, { type: 'TEXT', text }),
    code: 'INVALID_INPUT',
    requirements: ['SES-004'],
  })),
  fc
    .tuple(
      fc.nat(),
      fc
        .string({ unit: 'grapheme-ascii', maxLength: 40 })
        .filter((s) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)),
    )
    .map(([i, fileId]) => (base) => ({
      label: `FILE item whose file_id ${JSON.stringify(fileId)} is not a uuid`,
      body: withItem(base, i, { type: 'FILE', file_id: fileId }),
      code: 'INVALID_INPUT',
      requirements: ['SES-004'],
    })),
  notAnArray.map((input) => (base) => ({
    label: `input ${JSON.stringify(input)} is not an array`,
    body: { ...base, input },
    code: 'INVALID_INPUT',
    requirements: ['SES-004'],
  })),
  fc.constant((base: SessionBody) => {
    const { input: _input, ...rest } = base
    return {
      label: 'input missing',
      body: rest,
      code: 'INVALID_INPUT' as const,
      requirements: ['ERR-036'],
    }
  }),
  fc.constant((base: SessionBody) => ({
    label: 'input is an empty array',
    body: { ...base, input: [] },
    code: 'INVALID_INPUT' as const,
    requirements: ['SES-004'],
    assumed: 'an empty input is INVALID_INPUT (minItems 1 is assumed)',
  })),
  fc
    .oneof(fc.integer(), fc.boolean(), fc.string({ maxLength: 10 }), fc.constant(null))
    .map((body) => () => ({
      label: `body ${JSON.stringify(body)} is not an object`,
      body,
      code: 'INVALID_INPUT',
      requirements: ['ERR-036'],
    })),
  fc.array(fc.jsonValue(), { maxLength: 3 }).map((body) => () => ({
    label: `body ${JSON.stringify(body)} is an array`,
    body,
    code: 'INVALID_INPUT',
    requirements: ['ERR-036'],
  })),
  fc
    .tuple(fieldName(LIMIT_NAMES), fc.integer({ min: 1, max: 10 }))
    .map(([name, value]) => (base) => ({
      label: `undeclared limits field ${JSON.stringify(name)}`,
      body: withLimit(base, name, value),
      code: 'INVALID_INPUT',
      requirements: ['SES-007'],
    })),
  fc.constantFrom(...LIMIT_NAMES).chain((name) =>
    aboveMaximum(name).map((value) => (base: SessionBody) => ({
      label: `limits.${name} ${value} above its maximum ${SESSION_BOUNDS.limits[name].max}`,
      body: withLimit(base, name, value),
      code: 'LIMIT_OUT_OF_RANGE' as const,
      requirements: [
        { execution_seconds: 'SES-008', max_su: 'SES-009', queue_seconds: 'SES-010' }[name],
      ],
    })),
  ),
  fc.constantFrom(...LIMIT_NAMES).chain((name) =>
    notPositive(name).map((value) => (base: SessionBody) => ({
      label: `limits.${name} ${value} not greater than 0`,
      body: withLimit(base, name, value),
      code: 'LIMIT_OUT_OF_RANGE' as const,
      requirements: ['SES-011'],
    })),
  ),
  fc
    .tuple(
      fc.constantFrom(...LIMIT_NAMES),
      fc.oneof(
        fc.integer({ min: 1, max: 100 }).map(String),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 2 }),
        fc.constant({}),
      ),
    )
    .map(([name, value]) => (base) => ({
      label: `limits.${name} ${JSON.stringify(value)} is not a number`,
      body: withLimit(base, name, value),
      code: 'INVALID_INPUT',
      requirements: ['ERR-036'],
    })),
  fc
    .tuple(
      fc.constantFrom<LimitName>('execution_seconds', 'queue_seconds'),
      fc.integer({ min: 1, max: 599 }),
    )
    .map(([name, whole]) => (base) => ({
      label: `limits.${name} ${whole + 0.5} is not an integer`,
      body: withLimit(base, name, whole + 0.5),
      code: 'INVALID_INPUT',
      requirements: ['ERR-036'],
    })),
  notAnObject.map((limits) => (base) => ({
    label: `limits ${JSON.stringify(limits)} is not an object`,
    body: { ...base, limits },
    code: 'INVALID_INPUT',
    requirements: ['ERR-036'],
  })),
  fc
    .uniqueArray(fc.tuple(metadataKey(1, 16), metadataValue(16)), {
      minLength: SESSION_BOUNDS.metadata.maxKeys + 1,
      maxLength: SESSION_BOUNDS.metadata.maxKeys + 8,
      selector: ([k]) => k,
    })
    .map((entries) => (base) => ({
      label: `metadata with ${entries.length} keys`,
      body: { ...base, metadata: Object.fromEntries(entries) },
      code: 'INVALID_INPUT',
      requirements: ['SES-013'],
    })),
  fc.tuple(metadataValue(20)).map(([value]) => (base) => ({
    label: 'metadata key of 0 characters',
    body: { ...base, metadata: { ...trimTo(base.metadata, 15), '': value } },
    code: 'INVALID_INPUT',
    requirements: ['SES-014'],
  })),
  fc
    .tuple(
      chars(SESSION_BOUNDS.metadata.keyMax + 1, SESSION_BOUNDS.metadata.keyMax + 40),
      metadataValue(20),
    )
    .map(([key, value]) => (base) => ({
      label: `metadata key of ${key.length} characters`,
      body: { ...base, metadata: { ...trimTo(base.metadata, 15), [key]: value } },
      code: 'INVALID_INPUT',
      requirements: ['SES-014'],
    })),
  fc
    .tuple(
      metadataKey(1, 20),
      chars(SESSION_BOUNDS.metadata.valueMax + 1, SESSION_BOUNDS.metadata.valueMax + 100),
    )
    .map(([key, value]) => (base) => ({
      label: `metadata value of ${value.length} characters`,
      body: { ...base, metadata: { ...trimTo(base.metadata, 15), [key]: value } },
      code: 'INVALID_INPUT',
      requirements: ['SES-015'],
    })),
  fc.tuple(metadataKey(1, 20), notAString).map(([key, value]) => (base) => ({
    label: `metadata value ${JSON.stringify(value)} is not a string`,
    body: { ...base, metadata: { ...trimTo(base.metadata, 15), [key]: value } },
    code: 'INVALID_INPUT',
    requirements: ['ERR-036'],
    assumed:
      'metadata values are strings ("string value up to 512 characters" read as: only strings)',
  })),
  notAnObject.map((value) => (base) => ({
    label: `metadata ${JSON.stringify(value)} is not an object`,
    body: { ...base, metadata: value },
    code: 'INVALID_INPUT',
    requirements: ['ERR-036'],
  })),
]

/** Keeps at most `n` keys, so one added key stays within the 16-key bound. */
function trimTo(meta: Record<string, string> | undefined, n: number): Record<string, string> {
  return Object.fromEntries(Object.entries(meta ?? {}).slice(0, n))
}

function aboveMaximum(name: LimitName): fc.Arbitrary<number> {
  const { max, integer } = SESSION_BOUNDS.limits[name]
  const whole = fc.oneof(fc.constant(max + 1), fc.integer({ min: max + 1, max: 2 ** 31 - 1 }))
  return integer
    ? whole
    : fc.oneof(whole, fc.double({ min: max, minExcluded: true, max: 1e9, noNaN: true }))
}

function notPositive(name: LimitName): fc.Arbitrary<number> {
  const { integer } = SESSION_BOUNDS.limits[name]
  const whole = fc.oneof(fc.constant(0), fc.integer({ min: -(2 ** 31), max: 0 }))
  return integer
    ? whole
    : fc.oneof(
        whole,
        fc.double({ min: -1e9, max: 0, noNaN: true }).map((v) => (v === 0 ? 0 : v)),
      )
}

/** A valid body with exactly one violation, and the code the document gives that violation. */
export const sessionBodyViolation = (): fc.Arbitrary<BodyViolation> =>
  fc.tuple(sessionBody(), fc.oneof(...MUTATIONS)).map(([base, mutate]) => mutate(base))

/**
 * The violations just over each bound of a Session body (one key, one character, one unit over), always among
 * the cases checked: a server that is off by one fails on every run, never only on a lucky seed.
 */
export function boundaryViolations(base: SessionBody): BodyViolation[] {
  const { maxKeys, keyMax, valueMax } = SESSION_BOUNDS.metadata
  const keys = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']))
  const limitIds = { execution_seconds: 'SES-008', max_su: 'SES-009', queue_seconds: 'SES-010' }
  return [
    {
      label: `metadata with ${maxKeys + 1} keys`,
      body: { ...base, metadata: keys(maxKeys + 1) },
      code: 'INVALID_INPUT',
      requirements: ['SES-013'],
    },
    {
      label: `metadata key of ${keyMax + 1} characters`,
      body: { ...base, metadata: { ['k'.repeat(keyMax + 1)]: 'v' } },
      code: 'INVALID_INPUT',
      requirements: ['SES-014'],
    },
    {
      label: 'metadata key of 0 characters',
      body: { ...base, metadata: { '': 'v' } },
      code: 'INVALID_INPUT',
      requirements: ['SES-014'],
    },
    {
      label: `metadata value of ${valueMax + 1} characters`,
      body: { ...base, metadata: { k: 'v'.repeat(valueMax + 1) } },
      code: 'INVALID_INPUT',
      requirements: ['SES-015'],
    },
    ...LIMIT_NAMES.flatMap((name): BodyViolation[] => {
      const { max, integer } = SESSION_BOUNDS.limits[name]
      return [
        {
          label: `limits.${name} ${integer ? max + 1 : `just over ${max}`}`,
          body: withLimit(base, name, integer ? max + 1 : max + 0.01),
          code: 'LIMIT_OUT_OF_RANGE',
          requirements: [limitIds[name]],
        },
        {
          label: `limits.${name} 0`,
          body: withLimit(base, name, 0),
          code: 'LIMIT_OUT_OF_RANGE',
          requirements: ['SES-011'],
        },
      ]
    }),
  ]
}
