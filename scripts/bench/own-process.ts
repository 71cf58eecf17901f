/**
 * Runs one in-process scale bench (scale.ts) in a node process of its own and prints its result as the last
 * line, `result <json>`: node --import tsx scripts/bench/own-process.ts '<job json>' (see inOwnProcess).
 */
import { instances, virtualTimeRuns, type OwnProcessJob } from './scale.js'

const job = JSON.parse(process.argv[2] ?? '{}') as OwnProcessJob
const result =
  job.kind === 'virtual-time'
    ? await virtualTimeRuns(job.world, job.executions, job.runs)
    : await instances(job.count)
process.stdout.write(`result ${JSON.stringify(result)}\n`)
// The forked receivers and kept-alive sockets are closed; exit without waiting for timers of the libraries.
process.exit(0)
