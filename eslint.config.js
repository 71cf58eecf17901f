// Lint: typescript-eslint's recommended rules plus the project's boundaries (README: Architecture):
// the suite tests the document, not the mock; only the clock and id modules touch time and randomness;
// mock/ has no import cycles and its layers import only downwards (README: Architecture).
import js from '@eslint/js'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'
import { importX } from 'eslint-plugin-import-x'
import tseslint from 'typescript-eslint'

const wallClock = [
  {
    object: 'Date',
    property: 'now',
    message: 'Read time from the clock module (mock/clock/clock.ts).',
  },
  { object: 'Math', property: 'random', message: 'Use the ids module (mock/util/ids.ts).' },
  { object: 'crypto', property: 'randomUUID', message: 'Use the ids module (mock/util/ids.ts).' },
  {
    object: 'crypto',
    property: 'getRandomValues',
    message: 'Use the ids module (mock/util/ids.ts).',
  },
  { object: 'performance', property: 'now', message: 'Read time from the clock module.' },
]

// node:crypto's random sources: seeded record ids and random secrets both come from mock/util/ids.ts.
const randomImports = ['node:crypto', 'crypto'].map((name) => ({
  name,
  importNames: [
    'randomBytes',
    'randomUUID',
    'randomInt',
    'randomFill',
    'randomFillSync',
    'getRandomValues',
  ],
  message: 'Take ids and secret tokens from the ids module (deps.ids, mock/util/ids.ts).',
}))

// Module-level mutable state: a `let`, an empty collection or an empty array at the top of a module is
// shared by every mock instance in the process. Memos of pure computations use mock/util/memo.ts.
const topLevel = ['Program', 'Program > ExportNamedDeclaration']
const moduleState = topLevel.flatMap((parent) => [
  {
    selector: `${parent} > VariableDeclaration[kind='let']`,
    message:
      'Module-level `let` is state shared by every mock instance: keep it on the instance (deps).',
  },
  {
    selector: `${parent} > VariableDeclaration > VariableDeclarator > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/][arguments.length=0]`,
    message:
      'A module-level collection is state shared by every mock instance: keep it on the instance (deps), or memoize a pure computation with mock/util/memo.ts.',
  },
  {
    selector: `${parent} > VariableDeclaration > VariableDeclarator > ArrayExpression[elements.length=0]`,
    message:
      'A module-level empty array is state shared by every mock instance: keep it on the instance (deps).',
  },
])

// The layers of mock/, lowest first. A module imports at run time only from its own layer or lower ones;
// type-only imports (`import type`, `import { type X }`) are erased by tsc and exempt. Paths are relative to
// this file; a folder means everything in it.
const L0 = ['mock/util', 'mock/domain', 'mock/errors.ts', 'mock/deps.ts'] // and ../spec (outside mock/)
const L1 = ['mock/store']
const L2 = ['mock/clock']
const L3 = [
  'mock/faults',
  'mock/fixtures',
  'mock/execution',
  'mock/access',
  'mock/webhooks',
  'mock/events',
  'mock/works',
  'mock/referee',
]
const L4 = ['mock/http', 'mock/middleware']
// The inspector (page, state view, change stream) serves control-API routes beside routes/.
const L5 = ['mock/routes', 'mock/inspector']
// L6, the composition root: mock/app.ts, mock/wiring.ts, mock/index.ts, mock/main.ts (may import anything).
const layerNames = [
  'L0',
  'L1 store',
  'L2 clock',
  'L3 features',
  'L4 http/middleware',
  'L5 routes/inspector',
]
// A layer may import from mock/ only its own and lower layers: everything else in mock/ (higher layers, the
// composition root, and any folder not yet given a layer) is a restricted `from`.
const layerZones = [L0, L1, L2, L3, L4, L5].map((layer, i, all) => ({
  target: layer,
  from: 'mock',
  except: all
    .slice(0, i + 1)
    .flat()
    .map((p) => `./${p.slice('mock/'.length)}`),
  message: `${layerNames[i]} imports only its own or a lower layer at run time (README: Architecture).`,
}))
const forbid = (target, from, message) => ({ target, from, message })
const restrictedPaths = [
  ...layerZones,
  forbid('spec', 'mock', 'spec/ is L0: it never imports the mock.'),
  forbid('mock/deps.ts', 'mock', 'mock/deps.ts holds types only: import type.'),
  {
    target: 'mock/webhooks/kit',
    from: 'mock',
    except: ['./webhooks/kit'],
    message: 'The receiver kit is standalone: it imports nothing from mock/ outside itself.',
  },
  // Within L3.
  forbid(
    'mock/execution',
    ['mock/events', 'mock/webhooks', 'mock/access', 'mock/works', 'mock/fixtures'],
    'execution/ knows no events, webhooks, access, works or fixtures: they listen on the bus.',
  ),
  forbid(
    'mock/access',
    ['mock/execution', 'mock/webhooks', 'mock/works', 'mock/events'],
    'access/ imports no execution, webhooks or works, and events only for types.',
  ),
  forbid(
    'mock/webhooks',
    ['mock/execution', 'mock/access', 'mock/works', 'mock/events'],
    'webhooks/ imports no execution, access or works, and events only for types.',
  ),
  forbid(
    'mock/fixtures',
    ['mock/events', 'mock/webhooks', 'mock/access', 'mock/works'],
    'fixtures/ imports no events, webhooks, access or works.',
  ),
  forbid(
    'mock/routes',
    'mock/routes',
    'Route modules do not import each other: app.ts mounts each.',
  ),
]

// import-x's no-restricted-paths counts type-only imports too; they are erased at run time, so this wrapper
// skips them and checks every other import, re-export and dynamic import.
const typeOnly = (node) =>
  node.importKind === 'type' ||
  node.exportKind === 'type' ||
  (node.specifiers?.length > 0 &&
    node.specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type'))
const runtimeImports = (rule) => ({
  meta: rule.meta,
  create(context) {
    const listeners = rule.create(context)
    return Object.fromEntries(
      Object.entries(listeners).map(([selector, listener]) => [
        selector,
        (node, ...rest) => (typeOnly(node) ? undefined : listener(node, ...rest)),
      ]),
    )
  },
})
const layers = {
  rules: { 'no-restricted-paths': runtimeImports(importX.rules['no-restricted-paths']) },
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'spec/generated/**', 'coverage/**', 'reports/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['mock/**/*.ts'],
    ignores: ['mock/clock/**', 'mock/util/ids.ts', 'mock/util/memo.ts', 'mock/**/*.test.ts'],
    rules: {
      'no-restricted-properties': ['error', ...wallClock],
      'no-restricted-imports': ['error', { paths: randomImports }],
      'no-restricted-globals': [
        'error',
        {
          name: 'setTimeout',
          message: 'Schedule a timer with the scheduler (mock/clock/scheduler.ts).',
        },
        {
          name: 'setInterval',
          message: 'Schedule a timer with the scheduler (mock/clock/scheduler.ts).',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'new Date() reads the wall clock: take now from the clock module.',
        },
        // STYLE 2.3: no module-level mutable state; state lives on the instance (deps, wired in mock/wiring.ts).
        ...moduleState,
      ],
    },
  },
  {
    // The clock and id modules may read time and randomness, but keep no module-level state either.
    files: ['mock/clock/**/*.ts', 'mock/util/ids.ts'],
    ignores: ['mock/**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', ...moduleState] },
  },
  {
    // No import cycles and no upward imports in mock/ (type-only imports are exempt from both).
    files: ['mock/**/*.ts', 'spec/**/*.ts'],
    ignores: ['**/*.test.ts'],
    plugins: { 'import-x': importX, layers },
    settings: {
      // Without .ts here import-x skips every .ts dependency and no-cycle silently finds nothing.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.json` }),
      ],
    },
    rules: {
      'layers/no-restricted-paths': [
        'error',
        { basePath: import.meta.dirname, zones: restrictedPaths },
      ],
    },
  },
  {
    files: ['mock/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // The inspector's page: a browser module (no build step). Data reach the DOM through textContent only.
    files: ['mock/inspector/page/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'fetch',
          'console',
          'URL',
          'URLSearchParams',
          'TextDecoder',
          'AbortController',
          'sessionStorage',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'Headers',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: {
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: 'Render with textContent and DOM nodes (escaping).' },
        { property: 'outerHTML', message: 'Render with textContent and DOM nodes (escaping).' },
        { property: 'insertAdjacentHTML', message: 'Render with DOM nodes (escaping).' },
      ],
    },
  },
  {
    // The reference client talks to the service over HTTP only (README "Reference client").
    files: ['client/**/*.ts'],
    ignores: ['client/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/mock/**', '**/mock', '**/conformance/**'],
              message:
                'The reference client imports spec/ only (types and the catalog); it reaches a mock over HTTP.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['client/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/mock/*/**', '**/conformance/**'],
              message:
                'Client tests start a mock through mock/index.ts only and talk to it over HTTP.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['conformance/**/*.ts'],
    ignores: ['conformance/support/target.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/mock/**', '../mock/*', '../../mock/*', '../../../mock/*'],
              message:
                'The suite tests the document, not the mock: only conformance/support/target.ts imports mock/.',
            },
          ],
        },
      ],
    },
  },
)
