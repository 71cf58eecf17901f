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
    ignores: ['mock/clock/**', 'mock/util/ids.ts', 'mock/**/*.test.ts'],
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
