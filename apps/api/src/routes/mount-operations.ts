import type Router from '@koa/router';
import {
  ErrorCode,
  type OperationDeclaration,
  type OperationId,
  type OperationInput,
  type Operations,
  operationParameters,
  operations,
  parseJson,
  type QueryOf,
  type SuccessBodyOf,
} from '@plant-store/schema';
import compose from 'koa-compose';
import * as v from 'valibot';
import { ApiError, invalidRequest, invalidRequestAnswer } from '../http/api-error.js';
import type { AppContext, AppState } from '../http/app-state.js';
import type { Caller } from '../http/caller.js';
import { INT64_HEADER, int64FormOf, int64StringReader, stringifyJsonWithInt64Strings } from '../http/int64-form.js';
import { nextPageLink } from '../http/next-page-link.js';
import { noneMatchHolds, parseEntityTags, type RequestConditions, versionTag } from '../http/preconditions.js';
import { readInteger, readQueryParameters, readSmallInteger } from '../http/query.js';
import { respondJson, respondJsonText } from '../http/respond-json.js';
import { checkInput, parseInput } from '../http/validate.js';
import { type BearerAuthOptions, bearerAuth } from '../middleware/bearer-auth.js';
import { clientFaultsAs400 } from '../middleware/client-faults-as-400.js';
import { respondError } from '../middleware/handle-errors.js';
import { jsonBody } from '../middleware/json-body.js';
import { limitTokenRate, type TokenRateLimits } from '../middleware/limit-token-rate.js';
import { inlineJsonSchemaOf, jsonSchemaOf } from '../openapi/json-schemas.js';

/** What a paged listing's handler answers: one page in ascending id order, and whether more follow. */
export interface Page<TItem> {
  readonly items: readonly TItem[];
  readonly hasMore: boolean;
}

/**
 * A page whose items arrive already written as the contract's JSON (an array of its items, ids
 * exact), with the `after` of the next page (the last item's id, or the feed's cursor): the
 * plants' listing and the event feed, which PostgreSQL writes (see the db package's PlantPage).
 * Answered as it is.
 */
export interface EncodedPage {
  readonly json: string;
  readonly nextAfter: string | undefined;
  readonly hasMore: boolean;
}

/** The answer of an operation whose success carries an ETag: the body and its version. */
export interface Versioned<TValue> {
  readonly value: TValue;
  readonly version: bigint;
}

/** What a handler gets: the operation's validated input, and the conditional headers it honours. */
export type HandlerInput<TOperation extends OperationDeclaration> = OperationInput<TOperation> & {
  readonly conditions: RequestConditions;
};

/**
 * Gets the validated input and who sends it, returns the success body (a Page for a paged
 * listing, the body with its version for an answer with an ETag); fails by throwing ApiErrors.
 */
export type Handler<TOperation extends OperationDeclaration> = TOperation extends {
  readonly streamed: 'request' | 'response';
}
  ? StreamedHandler<TOperation>
  : (
      input: HandlerInput<TOperation>,
      caller: Caller,
    ) => Promise<
      TOperation['success']['paged'] extends true
        ? Page<SuccessBodyOf<TOperation> extends ReadonlyArray<infer TItem> ? TItem : never> | EncodedPage
        : TOperation['success']['etag'] extends true
          ? Versioned<SuccessBodyOf<TOperation>>
          : SuccessBodyOf<TOperation>
    >;

/**
 * A streamed operation's handler (see OperationDeclaration.streamed): it gets the validated query
 * and the request's context, reads the body or writes the answer itself, as a stream.
 */
export type StreamedHandler<TOperation extends OperationDeclaration> = (
  input: { readonly query: QueryOf<TOperation>; readonly ctx: AppContext },
  caller: Caller,
) => Promise<void>;

/** One handler for each declared operation, by operation id. */
export type Handlers = { readonly [TId in OperationId]: Handler<Operations[TId]> };

/** The handlers of the operations tagged `TTag`. */
export type HandlersOf<TTag extends OperationDeclaration['tag']> = Pick<
  Handlers,
  { [TId in OperationId]: Operations[TId]['tag'] extends TTag ? TId : never }[OperationId]
>;

type ReadInput = (ctx: AppContext) => Record<string, unknown> | undefined;

/**
 * Routes every operation of the contract to its handler, which must exist for each and only for
 * them. From the declaration: path and method, bearer auth with its scope and the token's rate
 * limit (before the body is read), the JSON body with its limit, validation of path, query and body, the success status
 * and a paged listing's next-page Link. Every operation honours `Plant-Store-Int64: string` (see int64-form.ts): int64s
 * in its body may be decimal strings, and its answer writes them so.
 */
export function mountOperations<THandlers extends Handlers>(
  router: Router<AppState>,
  handlers: THandlers & Record<Exclude<keyof THandlers, OperationId>, never>,
  options: {
    readonly auth: BearerAuthOptions;
    readonly bodyLimitBytes: number;
    /** Per-token rate limits; absent: none (unit tests). */
    readonly rateLimits?: TokenRateLimits | undefined;
  },
): void {
  const rateLimited = options.rateLimits ? [limitTokenRate(options.rateLimits)] : [];
  for (const [id, operation] of Object.entries(operations) as Array<[OperationId, OperationDeclaration]>) {
    const middleware = [
      ...(operation.clientFaultsAs400 ? [clientFaultsAs400()] : []),
      bearerAuth(options.auth, operation.scope, operation.alsoRequires),
      ...rateLimited,
      // A streamed body is read by its handler as it arrives, not here.
      ...(operation.body && operation.streamed !== 'request'
        ? [
            jsonBody({
              limitBytes: options.bodyLimitBytes,
              ...(operation.body.mediaTypes === undefined ? {} : { mediaTypes: operation.body.mediaTypes }),
              ...(operation.body.optional ? { optional: true } : {}),
            }),
          ]
        : []),
      operation.streamed === undefined
        ? runOperation(operation, handlers[id] as (input: unknown, caller: Caller) => Promise<unknown>)
        : runStreamed(operation, handlers[id] as (input: unknown, caller: Caller) => Promise<void>),
    ];
    // `/plants/{id}` is `/plants/:id` to the router. One middleware, composed once here: the
    // router composes (and flattens) a route's middleware again for every request it matches.
    router.register(
      operation.path.replaceAll(/\{(\w+)\}/g, ':$1'),
      [operation.method.toLowerCase()],
      [compose(middleware)],
    );
  }
}

function runOperation(operation: OperationDeclaration, handler: (input: unknown, caller: Caller) => Promise<unknown>) {
  const readParams = pathReader(operation);
  const readQuery = queryReader(operation);
  const readConditions = conditionsReader(operation);
  const { body, success } = operation;
  const honoursIfNoneMatch = operation.preconditions?.includes('If-None-Match') === true;
  // Path and query int64s are decimal text in either form; a body's are JSON integers or, when asked, strings.
  const readInt64Strings = body ? int64StringReader(inlineJsonSchemaOf(body.schema)) : undefined;
  const writePageWithInt64Strings = encodedPageRewriter(operation);
  return async (ctx: AppContext) => {
    const int64Form = int64FormOf(ctx.req.headers);
    const params = readParams(ctx);
    const query = readQuery(ctx);
    const conditions = readConditions(ctx);
    const sent = int64Form === 'string' && readInt64Strings ? readInt64Strings(ctx.state.jsonBody) : ctx.state.jsonBody;
    const checked = body ? checkInput(body.schema, sent) : { output: undefined };
    // Answered here rather than thrown: an invalid body is the commonest client error.
    if ('issue' in checked) return respondError(ctx, invalidRequestAnswer(checked.issue));
    // bearerAuth, ahead in every route, has set the caller of every request that gets here.
    const { caller } = ctx.state;
    if (caller === undefined) throw new Error(`${operation.method} ${operation.path} ran without bearerAuth`);
    const answer = await handler({ params, query, body: checked.output, conditions }, caller);
    if (success.status === 204) {
      ctx.status = 204;
      return;
    }
    // The same URL answers either form: a cache must keep them apart.
    ctx.res.setHeader('Vary', INT64_HEADER);
    if (int64Form === 'string') ctx.res.setHeader(INT64_HEADER, 'string');
    if (success.paged) {
      const page = answer as Page<{ readonly id: bigint }> | EncodedPage;
      const nextAfter = 'json' in page ? page.nextAfter : page.items.at(-1)?.id.toString();
      if (page.hasMore && nextAfter !== undefined) {
        // The next page: this one's query, in its order, with `after` the page's last id (or cursor).
        const next = Object.fromEntries(Object.entries(query ?? {}).map(([name, value]) => [name, String(value)]));
        ctx.set('Link', nextPageLink({ ...next, after: nextAfter }));
      }
      if ('json' in page) {
        respondJsonText(ctx, success.status, int64Form === 'string' ? writePageWithInt64Strings(page.json) : page.json);
      } else {
        respondJson(ctx, success.status, page.items, int64Form);
      }
    } else if (success.etag) {
      const { value, version } = answer as Versioned<unknown>;
      ctx.set('ETag', versionTag(version, int64Form));
      // The client holds the current version: nothing to send (RFC 9110 13.1.2).
      if (honoursIfNoneMatch && noneMatchHolds(conditions.ifNoneMatch, version, int64Form)) ctx.status = 304;
      else respondJson(ctx, success.status, value, int64Form);
    } else {
      respondJson(ctx, success.status, answer, int64Form);
    }
  };
}

/** A streamed operation: its query validated, then its handler, which answers by itself. */
function runStreamed(operation: OperationDeclaration, handler: (input: unknown, caller: Caller) => Promise<void>) {
  const readQuery = queryReader(operation);
  return async (ctx: AppContext) => {
    const query = readQuery(ctx);
    const { caller } = ctx.state;
    if (caller === undefined) throw new Error(`${operation.method} ${operation.path} ran without bearerAuth`);
    await handler({ query, ctx }, caller);
  };
}

/** The conditional headers the operation honours, parsed (a malformed one is a 400). */
function conditionsReader(operation: OperationDeclaration): (ctx: AppContext) => RequestConditions {
  const honoured = operation.preconditions ?? [];
  if (honoured.length === 0) return () => ({});
  return (ctx) => {
    const ifMatch = honoured.includes('If-Match') ? ctx.req.headers['if-match'] : undefined;
    const ifNoneMatch = honoured.includes('If-None-Match') ? ctx.req.headers['if-none-match'] : undefined;
    return {
      ...(ifMatch === undefined ? {} : { ifMatch: parseEntityTags(ifMatch, 'If-Match') }),
      ...(ifNoneMatch === undefined ? {} : { ifNoneMatch: parseEntityTags(ifNoneMatch, 'If-None-Match') }),
    };
  };
}

/**
 * An EncodedPage's JSON (written by the database, int64s as integers) rewritten with int64s as
 * strings: read back exactly and through the success schema, which turns its int64s, and only
 * them, into bigints. Only a request that asks for strings pays for it.
 */
function encodedPageRewriter({ success }: OperationDeclaration): (json: string) => string {
  const { schema } = success;
  return (json) => {
    if (schema === undefined) throw new Error('a page without a success schema');
    return stringifyJsonWithInt64Strings(v.parse(schema, parseJson(json)));
  };
}

/**
 * How a parameter's text becomes what its schema judges: an int64 a bigint, another integer a
 * number, either the text itself when it is no decimal integer (for the schema to refuse); text as is.
 */
function textReader(schema: v.GenericSchema): (text: string) => unknown {
  const { type, format } = jsonSchemaOf(schema);
  if (format === 'int64') return readInteger;
  return type === 'integer' ? readSmallInteger : (text) => text;
}

/**
 * The path parameters, each validated in the declared order: a 400 naming the rule, or for an
 * opaque id a 404 (see ParameterDeclaration.malformedMessage).
 */
function pathReader(operation: OperationDeclaration): ReadInput {
  const readers = (operation.parameters ?? [])
    .map((name) => operationParameters[name])
    .filter((parameter) => parameter.in === 'path')
    .map((parameter) => {
      const read = textReader(parameter.schema);
      const malformedMessage = 'malformedMessage' in parameter ? parameter.malformedMessage : undefined;
      return (ctx: AppContext): [string, unknown] => {
        const checked = checkInput(parameter.schema, read(ctx.params[parameter.name] ?? ''));
        if ('output' in checked) return [parameter.name, checked.output];
        throw malformedMessage === undefined
          ? invalidRequest(checked.issue)
          : new ApiError(ErrorCode.NotFound, malformedMessage);
      };
    });
  return (ctx) => Object.fromEntries(readers.map((read) => read(ctx)));
}

/** The query, read from the raw query string (each parameter at most once) and validated as one object. */
function queryReader({ query }: OperationDeclaration): ReadInput {
  if (query === undefined) return () => undefined;
  const readers = new Map(Object.entries(query.entries).map(([name, schema]) => [name, textReader(schema)]));
  const names: ReadonlySet<string> = new Set(readers.keys());
  return (ctx) => {
    // Read in place: the parameters' texts become what their schemas judge, in the same object.
    const values: Record<string, unknown> = readQueryParameters(ctx.querystring, names);
    for (const name in values) values[name] = readers.get(name)?.((values[name] as string | undefined) ?? '');
    return parseInput(query, values);
  };
}
