/**
 * The mock says what it is on every response it gives: X-Mock-Version (this package's version) and
 * X-Mock-Interface-Version (the interface document's version it simulates, info.version of spec/openapi.yaml),
 * so an SDK's test log tells which mock answered. Mock-only headers: a real deployment sends neither.
 */
import { loadOpenApi, PACKAGE_VERSION } from '../../spec/index.js'

export const MOCK_VERSION_HEADER = 'X-Mock-Version'
export const INTERFACE_VERSION_HEADER = 'X-Mock-Interface-Version'

/** The mock's version and the interface version it simulates. */
export const versions = (): { mock_version: string; interface_version: string } => ({
  mock_version: PACKAGE_VERSION,
  interface_version: loadOpenApi().info.version,
})

/** The two headers, set on every answer by middleware/frame.ts. */
export function versionHeaders(): (readonly [string, string])[] {
  const v = versions()
  return [
    [MOCK_VERSION_HEADER, v.mock_version],
    [INTERFACE_VERSION_HEADER, v.interface_version],
  ]
}
