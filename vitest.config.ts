import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// The suite's setup file: TypeScript in the repository, JavaScript in the package's build (dist/).
const here = fileURLToPath(new URL('.', import.meta.url))
const conformanceSetup = existsSync(`${here}conformance/support/setup.ts`)
  ? 'conformance/support/setup.ts'
  : 'conformance/support/setup.js'

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: 'mock', include: ['mock/**/*.test.ts', 'scripts/**/*.test.ts'] },
      },
      {
        test: {
          name: 'conformance',
          // .js: the compiled suite of the package's build (dist/conformance), run by ./conformance.
          include: ['conformance/**/*.test.{ts,js}'],
          setupFiles: [conformanceSetup],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'client',
          include: ['client/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
})
