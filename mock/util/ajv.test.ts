/**
 * The control API's body schemas are compiled on first use (not at start-up), so a schema ajv refuses in
 * strict mode would only fail its first request: this compiles every one the app registers.
 */
import { expect, it } from 'vitest'
import { createMock } from '../index.js'
import { compileAllControlSchemas } from './ajv.js'

it('every control-API body schema the app registers compiles in strict mode', async () => {
  const mock = await createMock()
  try {
    expect(compileAllControlSchemas()).toBeGreaterThan(10)
  } finally {
    mock.close()
  }
})
