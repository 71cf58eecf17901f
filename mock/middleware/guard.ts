/**
 * A guard is one check of an operation's pipeline (mock/http/route.ts): it throws the document's error, or
 * records what it read on the context (c.set) and returns. It is asynchronous only when it must wait (reading
 * a body). route() runs an operation's guards in order inside one handler: the checks are plain calls, not one
 * Hono middleware layer each (every layer costs each request a closure and a promise).
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'

export type Guard = (c: Context<Env>) => void | Promise<void>
