/**
 * Stopping with the process that started the mock. `npx ai-employee-mock` and `npm start` run the server as a
 * child of npm (npm, then `sh -c`, then node), and npm does not pass SIGTERM on: `kill <npm's pid>` ends npm
 * and leaves the server holding its port. Started by npm, the mock therefore watches its parent process:
 * once the parent is gone (the process is handed to another parent), it stops as on SIGTERM.
 */

/** How often the parent is checked, in wall ms. */
export const PARENT_CHECK_MS = 250

/** Whether this process was started by npm (npm start, npm run, npm exec, npx). */
export const startedByNpm = (env: NodeJS.ProcessEnv): boolean =>
  env.npm_lifecycle_event !== undefined || env.npm_command !== undefined

/**
 * Calls onGone once when the parent process of this one is no longer `parent` (by default the parent now;
 * main passes the one the process started with, so that a parent gone before the watch began counts);
 * returns a function that stops watching. The check never holds the process open.
 */
export function watchParent(
  onGone: () => void,
  ppid: () => number = () => process.ppid,
  everyMs = PARENT_CHECK_MS,
  parent = ppid(),
): () => void {
  const handle = setInterval(() => {
    if (ppid() === parent) return
    clearInterval(handle)
    onGone()
  }, everyMs)
  handle.unref()
  return () => clearInterval(handle)
}
