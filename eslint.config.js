// Lint: typescript-eslint's recommended rules plus the project's boundaries (STYLE.md 2.3):
// the suite tests the document, not the mock; only the clock and id modules touch time and randomness.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const wallClock = [
  {
    object: 'Date',
    property: 'now',
    message: 'Read time from the clock module (mock/clock/clock.ts).',
  },
  { object: 'Math', property: 'random', message: 'Use the seeded ids module (mock/util/ids.ts).' },
  {
    object: 'crypto',
    property: 'randomUUID',
    message: 'Use the seeded ids module (mock/util/ids.ts).',
  },
  { object: 'performance', property: 'now', message: 'Read time from the clock module.' },
]

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

export default tseslint.config(
  { ignores: ['node_modules/**', 'spec/generated/**', 'coverage/**', 'reports/**'] },
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
