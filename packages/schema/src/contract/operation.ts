import type * as v from 'valibot';
import type { ErrorCode } from '../error.js';
import type { operationParameters, ParameterName } from './parameters.js';
import type { Scope } from './scopes.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type SuccessStatus = 200 | 201 | 202 | 204;

/** The groups operations are listed under, with what each holds. */
export const OPERATION_TAGS = {
  plants: 'The plants in the store',
  webhooks: "Receivers of plant events, and their deliveries: each team's own",
  tokens: "Bearer tokens: each team's issued, listed and revoked by its own tokens:manage token",
  audit: "Who did what, when, from where: each team's log",
  events: 'Every change to a plant, in commit order: a feed to catch up from',
} as const;

/**
 * One HTTP operation of the contract, as data: the service mounts its handler from it, the
 * OpenAPI document describes it from it, the client calls it from it.
 */
export interface OperationDeclaration {
  readonly method: HttpMethod;
  /** OpenAPI-style template: `/plants/{id}`; each `{name}` is one of `parameters`. */
  readonly path: `/${string}`;
  readonly tag: keyof typeof OPERATION_TAGS;
  /** The scope the bearer token must carry. */
  readonly scope: Scope;
  /** Other scopes it must carry as well (creating a subscription, whose events carry plants, needs plants:read too). */
  readonly alsoRequires?: readonly Scope[];
  /**
   * When it answers 403 besides a missing scope, as a clause following "the token lacks the
   * scope" (issuing a token beyond what the caller may grant).
   */
  readonly forbiddenWhen?: string;
  readonly summary: string;
  /** What it does. The scope it needs and the body's limits are said where it is shown. */
  readonly description: string;
  /** Its path and query parameters, in the order shown (see operationParameters). */
  readonly parameters?: readonly ParameterName[];
  /** The query, as one object: its entries are the query parameters listed in `parameters`. */
  readonly query?: v.ObjectSchema<v.ObjectEntries, undefined>;
  /**
   * A JSON object body, read with the exact codec (int64 as bigint) within the body limit, sent as
   * one of `mediaTypes` (default `application/json` alone).
   */
  readonly body?: {
    readonly schema: v.GenericSchema;
    readonly description: string;
    readonly mediaTypes?: readonly string[];
    /** The body may be left out altogether: the handler then gets the schema's output for `{}`. */
    readonly optional?: true;
  };
  /**
   * The conditional request headers it honours (RFC 9110): `If-Match` (a change only while the
   * resource has one of the versions named; 412 otherwise), `If-None-Match` (a read answered 304
   * when the client holds the current version).
   */
  readonly preconditions?: readonly ('If-Match' | 'If-None-Match')[];
  readonly success: {
    readonly status: SuccessStatus;
    readonly description: string;
    /** The answer's body; none for a 204. */
    readonly schema?: v.GenericSchema;
    /** A page of a listing in ascending order: `Link: <...>; rel="next"` names the next one. */
    readonly paged?: true;
    /** The answer carries an `ETag`: the version of the one resource it holds. */
    readonly etag?: true;
  };
  /**
   * The failures this operation has of its own, each `error` code with why it is answered.
   * Besides these, every operation may answer COMMON_ERROR_CODES, and one with a body
   * BODY_ERROR_CODES. Under `clientFaultsAs400`, the reason is a phrase following the code.
   */
  readonly errors: Partial<Record<ErrorCode, string>>;
  /**
   * Streamed rather than read or answered whole. `request`: the body is NDJSON (`body.mediaTypes`),
   * each line one `body.schema` object, of no size limit but the line's; the service reads it as it
   * arrives. `response`: the answer is NDJSON, each line one `success.schema` object, written as it
   * is read from the database.
   */
  readonly streamed?: 'request' | 'response';
  /** The spec's rule for POST /plants: every failure caused by what the client sent answers HTTP 400, `error` naming why. */
  readonly clientFaultsAs400?: true;
}

/**
 * Every operation may answer: no valid token (401), a token without the scope (403), too many
 * requests for the token's rate limit or too many failed authentications from the client's
 * address (429), a fault (500), the database away (503).
 */
export const COMMON_ERROR_CODES = [401, 403, 429, 500, 503] as const satisfies readonly ErrorCode[];
/** An operation with a body may also answer: larger than the limit (413), not JSON in UTF-8 (415). */
export const BODY_ERROR_CODES = [413, 415] as const satisfies readonly ErrorCode[];
/** The failures caused by what the client sent: what `clientFaultsAs400` answers with HTTP 400. */
export const CLIENT_FAULT_CODES = [400, 409, 413, 415] as const satisfies readonly ErrorCode[];

type Parameters = typeof operationParameters;
type OutputOf<TSchema> = TSchema extends v.GenericSchema ? v.InferOutput<TSchema> : undefined;

/** An operation's path parameters by template name, as validated (int64 ids as bigint). */
export type PathParametersOf<TOperation extends OperationDeclaration> = {
  readonly [TName in NonNullable<TOperation['parameters']>[number] as Parameters[TName]['in'] extends 'path'
    ? Parameters[TName]['name']
    : never]: v.InferOutput<Parameters[TName]['schema']>;
};
/** An operation's query, as validated (defaults filled in); undefined when it takes none. */
export type QueryOf<TOperation extends OperationDeclaration> = OutputOf<TOperation['query']>;
/** An operation's body, as validated; undefined when it takes none. */
export type BodyOf<TOperation extends OperationDeclaration> = OutputOf<NonNullable<TOperation['body']>['schema']>;
/** What an operation answers on success; undefined for a 204 (no body). */
export type SuccessBodyOf<TOperation extends OperationDeclaration> = OutputOf<TOperation['success']['schema']>;

/** Everything an operation's request carries once validated. */
export interface OperationInput<TOperation extends OperationDeclaration> {
  readonly params: PathParametersOf<TOperation>;
  readonly query: QueryOf<TOperation>;
  readonly body: BodyOf<TOperation>;
}
