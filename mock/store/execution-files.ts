/**
 * What the result rules need to know about the files of one execution: the bytes its input files and result
 * files hold together (SIZE-012: a result past it is OUTPUT_LIMIT_EXCEEDED). Two indexed sums.
 */
import type { Db } from './db.js'

/** Bytes of an execution's files that are not deleted: input files bound to it and artifacts it produced. */
export function executionFileBytes(db: Db, executionId: string): number {
  const sum = (sql: string) => (db.stmt(sql).get(executionId) as { n: number }).n
  return (
    sum('SELECT COALESCE(SUM(size_bytes), 0) AS n FROM files WHERE bound_to = ? AND deleted = 0') +
    sum(
      "SELECT COALESCE(SUM(size_bytes), 0) AS n FROM files WHERE execution_id = ? AND kind = 'ARTIFACT' AND deleted = 0",
    )
  )
}
