import { defineConfig } from 'vitest/config'

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
          setupFiles: ['conformance/support/setup.ts'],
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
