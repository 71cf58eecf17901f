/**
 * Organization data of a workflow (Workflows and Runs, Run request rules 4-5): the scope declared at
 * publication (grant), what its steps read or write (uses), and whether the organization data store that
 * checks Run input answers. The document names the two refusals (403 WORKFLOW_DATA_DENIED, 503
 * SOURCE_UNAVAILABLE) but not how a scope is written: the mock's entries are `<source>:READ` or
 * `<source>:WRITE` (assumed), and an entry is covered only by the same entry in the grant. Pure: no SQL, no HTTP.
 */

/** One scope entry: a data source (dotted lowercase name) and READ or WRITE. */
export type DataScope = `${string}:${'READ' | 'WRITE'}`

export type OrganizationData = {
  /** The scope declared at publication. */
  grant: DataScope[]
  /** What the workflow's steps read or write at its published version. */
  uses: DataScope[]
  /** Whether the organization data store that checks Run input is reachable now. */
  source_reachable: boolean
}

/** The form of a scope entry (fixtures and the control API). */
export const DATA_SCOPE_PATTERN = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*:(READ|WRITE)$/

/** RUN-036: the entries the workflow uses beyond its publication grant (empty: within it). */
export const beyondGrant = (od: OrganizationData): DataScope[] =>
  od.uses.filter((u) => !od.grant.includes(u))
