/**
 * The types of a documented operation's request and reply, taken from the types openapi-typescript generates
 * from spec/openapi.yaml (spec/generated/openapi.ts). route() (mock/http/route.ts) takes a Handler<O>: it is
 * given the validated request as a TypedRequest<O> and answers a Reply<O> (one of the operation's documented
 * success statuses with that status's JSON body), or a raw Response for streams and file bytes.
 *
 *   route(app, 'getSession', (c, req) => {
 *     const session = visibleSession(c.var.deps, req.auth, req.params.session_id) // no `!`, no cast
 *     return { status: 200, body: sessionDetail(c.var.deps, session) } // body checked against Session
 *   })
 */
import type { Context } from 'hono'
import type { components, operations } from '../../spec/index.js'
import type { AuthInfo, Env, RequestInput } from '../deps.js'
import type { OperationSpec } from './operations.js'

/** A named schema of the document (components.schemas). */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N]

/** Every operationId of the document: a typo is a compile error. */
export type OperationId = keyof operations

type Op<O extends OperationId> = operations[O]
/** T, or an empty record where the document declares nothing (`never` in the generated types). */
type OrEmpty<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>

/** The path parameters (strings; {} when the path has none). */
export type PathParams<O extends OperationId> = OrEmpty<Op<O>['parameters']['path']>

/** The query parameters that were sent, validated and coerced to their documented types. */
export type QueryParams<O extends OperationId> = OrEmpty<Op<O>['parameters']['query']>

type RequestContent<O extends OperationId> =
  NonNullable<Op<O>['requestBody']> extends { content: infer C } ? C : never

/** The JSON request body ({} for an absent EmptyInput body); undefined without one or for an upload. */
export type RequestBody<O extends OperationId> = [RequestContent<O>] extends [never]
  ? undefined
  : RequestContent<O> extends { 'application/json': infer B }
    ? B
    : undefined

type Headers<O extends OperationId> = NonNullable<Op<O>['parameters']['header']>

/** true when the operation requires an Idempotency-Key (route() then runs its handler in one transaction). */
export type IsIdempotent<O extends OperationId> = [Headers<O>] extends [never]
  ? false
  : Headers<O> extends { 'Idempotency-Key': string }
    ? true
    : false

/**
 * The operations the document does not authenticate with an API key (their `security`); every other one
 * takes an API key. route() checks this table against the document when it registers an operation.
 */
const NOT_API_KEY = {
  getArtifactContent: 'downloadToken',
  listWebhookEndpoints: 'ownerToken',
  createWebhookEndpoint: 'ownerToken',
  updateWebhookEndpoint: 'ownerToken',
  deleteWebhookEndpoint: 'ownerToken',
  rotateWebhookSecret: 'ownerToken',
  listWebhookDeliveries: 'ownerToken',
  replayWebhookDelivery: 'ownerToken',
} as const satisfies { [O in OperationId]?: 'ownerToken' | 'downloadToken' }

/** apiKey, ownerToken or downloadToken. */
export type SecurityKind<O extends OperationId> = O extends keyof typeof NOT_API_KEY
  ? (typeof NOT_API_KEY)[O]
  : 'apiKey'

/** The authentication these types assume for an operation (route() compares it with the document). */
export function securityKind(operationId: OperationId): OperationSpec['security']['kind'] {
  const table: { readonly [O in OperationId]?: 'ownerToken' | 'downloadToken' } = NOT_API_KEY
  return table[operationId] ?? 'apiKey'
}

type ApiKeyAuth = {
  /** The API key's Project, scopes and Deployments. */
  auth: AuthInfo
}
type OwnerAuth = {
  /** The Project of the owner login token (the path's project_id). */
  ownerProjectId: string
}
/** A download-token request (getArtifactContent) has neither: the handler checks the token itself. */
type AuthPart<O extends OperationId> =
  SecurityKind<O> extends 'apiKey'
    ? ApiKeyAuth
    : SecurityKind<O> extends 'ownerToken'
      ? OwnerAuth
      : unknown

type IdempotencyPart<O extends OperationId> =
  IsIdempotent<O> extends true
    ? {
        idempotencyKey: string
        /** When a new receipt stops answering (ISO 8601): handlers put it in idempotency_expires_at. */
        idempotencyExpiresAt: string
      }
    : unknown

type UploadPart<O extends OperationId> =
  RequestContent<O> extends { 'multipart/form-data': unknown }
    ? {
        /** The one `file` part. */
        upload: NonNullable<RequestInput['upload']>
        /** The content check made by the operation's `prepare` (RouteOptions). */
        uploadTypeProblem: RequestInput['uploadTypeProblem']
      }
    : unknown

/** The validated request of operation O, as its handler sees it (for a union of ids, one of theirs). */
export type TypedRequest<O extends OperationId> = O extends OperationId
  ? {
      params: PathParams<O>
      query: QueryParams<O>
      body: RequestBody<O>
    } & AuthPart<O> &
      IdempotencyPart<O> &
      UploadPart<O>
  : never

type SuccessStatus = 200 | 201 | 202
type Responses<O extends OperationId> = Op<O>['responses']
type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : never

/** Extra headers and the idempotency receipt's execution, beside status and body. */
type ReplyExtras = {
  headers?: Record<string, string>
  /** Turn or Run id: the idempotency receipt is kept until this execution ends (and at least 24 hours). */
  execution?: string
}

/** A documented success answer of O: one of its 200/201/202 statuses and that status's JSON body. */
export type Reply<O extends OperationId> = {
  [S in SuccessStatus & keyof Responses<O>]: [JsonContent<Responses<O>[S]>] extends [never]
    ? never
    : { status: S; body: JsonContent<Responses<O>[S]> } & ReplyExtras
}[SuccessStatus & keyof Responses<O>]

/** Any operation's Reply, as route() renders and stores it. */
export type AnyReply = { status: SuccessStatus; body: unknown } & ReplyExtras

/**
 * The handler of O. An idempotent operation's handler is synchronous and answers a Reply (it runs inside the
 * receipt transaction); any other may be asynchronous and may answer a raw Response (SSE, file bytes).
 */
export type Handler<O extends OperationId> = (
  c: Context<Env>,
  req: TypedRequest<O>,
) => IsIdempotent<O> extends true ? Reply<O> : Reply<O> | Response | Promise<Reply<O> | Response>

/**
 * Handler<O> by operation. route() takes `HandlerOf[O]`: an indexed access, unlike Handler<O>, is
 * instantiated with the inferred O before the handler's return is typed, so its string literals ('RESOLVED',
 * 'SESSION') keep their literal types instead of widening to string.
 */
export type HandlerOf = { [O in OperationId]: Handler<O> }

/** What an operation's `prepare` may add to the request before the handler runs. */
export type Prepared = Pick<RequestInput, 'uploadTypeProblem'>

/**
 * The handler's view of a request that passed the pipeline of `op`: the body and query were validated
 * against the same document the types come from, and the pipeline authenticated the request as the
 * document says (checked here once, so handlers need no `!`).
 */
export function requestOf<O extends OperationId>(
  c: Context<Env>,
  op: OperationSpec,
): TypedRequest<O> {
  const input = c.var.input
  if (!input) throw new Error(`${op.operationId}: no validated input`)
  const { auth, ownerProjectId } = c.var
  if (op.security.kind === 'apiKey' && !auth)
    throw new Error(`${op.operationId}: not authenticated`)
  if (op.security.kind === 'ownerToken' && ownerProjectId === undefined)
    throw new Error(`${op.operationId}: not authenticated`)
  const req = {
    params: c.req.param(),
    query: input.query,
    body: input.body,
    upload: input.upload,
    uploadTypeProblem: input.uploadTypeProblem,
    auth,
    ownerProjectId,
    idempotencyKey: input.idempotencyKey,
    idempotencyExpiresAt: input.idempotencyExpiresAt,
  }
  // The one place the validated request meets its types: the pipeline checked it against the document.
  return req as unknown as TypedRequest<O>
}
