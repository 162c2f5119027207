import type Router from '@koa/router';
import {
  ErrorCode,
  type OperationDeclaration,
  type OperationId,
  type OperationInput,
  type Operations,
  operationParameters,
  operations,
  type SuccessBodyOf,
} from '@plant-store/schema';
import type { Middleware } from 'koa';
import type * as v from 'valibot';
import { ApiError } from '../http/api-error.js';
import type { AppContext, AppState } from '../http/app-state.js';
import { nextPageLink } from '../http/next-page-link.js';
import { readInteger, readQueryParameters, readSmallInteger } from '../http/query.js';
import { respondJson } from '../http/respond-json.js';
import { checkInput, parseInput } from '../http/validate.js';
import { type AuthenticateToken, bearerAuth } from '../middleware/bearer-auth.js';
import { clientFaultsAs400 } from '../middleware/client-faults-as-400.js';
import { respondError } from '../middleware/handle-errors.js';
import { jsonBody } from '../middleware/json-body.js';
import { jsonSchemaOf } from '../openapi/json-schemas.js';

/** What a paged listing's handler answers: one page of items in ascending id order, and whether more follow. */
export interface Page<TItem> {
  readonly items: readonly TItem[];
  readonly hasMore: boolean;
}

type Answer<TOperation> = TOperation extends { readonly success: { readonly paged: true } }
  ? Page<SuccessBodyOf<TOperation> extends ReadonlyArray<infer TItem> ? TItem : never>
  : SuccessBodyOf<TOperation>;

/** Gets the validated input, returns the success body (or page); failures are thrown ApiErrors. */
export type Handler<TOperation> = (input: OperationInput<TOperation>) => Promise<Answer<TOperation>>;

/** One handler for each declared operation, by operation id. */
export type Handlers = { readonly [TId in OperationId]: Handler<Operations[TId]> };

/** The handlers of the operations tagged `TTag`. */
export type HandlersOf<TTag extends OperationDeclaration['tag']> = Pick<
  Handlers,
  { [TId in OperationId]: Operations[TId]['tag'] extends TTag ? TId : never }[OperationId]
>;

/** `THandlers`, when it has a handler for every operation and nothing else. */
export type ExactHandlers<THandlers> = THandlers & Record<Exclude<keyof THandlers, OperationId>, never>;

export interface MountOptions {
  readonly authenticateToken: AuthenticateToken;
  readonly bodyLimitBytes: number;
}

type UntypedHandler = (input: unknown) => Promise<unknown>;

/**
 * Routes every operation of the contract to its handler. From the declaration: the path and
 * method, the bearer scope (checked before the body is read), the JSON body (read with its
 * limit), validation of the path, query and body, the success status and the next-page Link.
 */
export function mountOperations<THandlers extends Handlers>(
  router: Router<AppState>,
  handlers: ExactHandlers<THandlers>,
  { authenticateToken, bodyLimitBytes }: MountOptions,
): void {
  for (const [id, operation] of Object.entries(operations) as Array<[OperationId, OperationDeclaration]>) {
    const middleware: Middleware<AppState>[] = [];
    if (operation.clientFaultsAs400) middleware.push(clientFaultsAs400());
    middleware.push(bearerAuth(authenticateToken, operation.scope));
    if (operation.body) middleware.push(jsonBody({ limitBytes: bodyLimitBytes }));
    middleware.push(runOperation(operation, handlers[id] as UntypedHandler));
    // `/plants/{id}` is `/plants/:id` to the router.
    router.register(operation.path.replaceAll(/\{(\w+)\}/g, ':$1'), [operation.method.toLowerCase()], middleware);
  }
}

function runOperation(operation: OperationDeclaration, handler: UntypedHandler): Middleware<AppState> {
  const readParams = pathReader(operation);
  const readQuery = queryReader(operation);
  const { body } = operation;
  const { status, paged } = operation.success;
  return async (ctx) => {
    const params = readParams(ctx);
    const query = readQuery(ctx);
    let bodyInput: unknown;
    if (body) {
      const checked = checkInput(body.schema, ctx.state.jsonBody);
      // Answered here rather than thrown: an invalid body is the commonest client error.
      if ('error' in checked) return respondError(ctx, checked.error);
      bodyInput = checked.output;
    }
    const answer = await handler({ params, query, body: bodyInput });
    if (status === 204) {
      ctx.status = 204;
    } else if (paged) {
      const { items, hasMore } = answer as Page<{ readonly id: bigint }>;
      const last = items.at(-1);
      if (hasMore && last) ctx.set('Link', nextPageLink(nextPageQuery(query, last.id)));
      respondJson(ctx, status, items);
    } else {
      respondJson(ctx, status, answer);
    }
  };
}

/** The query of the next page: this one's parameters, in their order, with `after` the page's last id. */
function nextPageQuery(query: unknown, lastId: bigint): Record<string, string> {
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) next[name] = String(value);
  next.after = String(lastId);
  return next;
}

/**
 * A parameter's text as its schema judges it: an int64 as a bigint, another integer as a number
 * (or, either, the text when it is not a decimal integer, for the schema to refuse), text as is.
 */
function textReader(schema: v.GenericSchema): (text: string) => unknown {
  const { type, format } = jsonSchemaOf(schema);
  if (format === 'int64') return readInteger;
  if (type === 'integer') return readSmallInteger;
  return (text) => text;
}

/**
 * The path parameters, each validated on its own in the declared order: a 400 naming the rule,
 * or a 404 for an opaque id that names nothing (see ParameterDeclaration.malformedMessage).
 */
function pathReader(operation: OperationDeclaration): (ctx: AppContext) => Record<string, unknown> {
  const readers = (operation.parameters ?? [])
    .map((name) => operationParameters[name])
    .filter((parameter) => parameter.in === 'path')
    .map((parameter) => {
      const read = textReader(parameter.schema);
      const malformedMessage = 'malformedMessage' in parameter ? parameter.malformedMessage : undefined;
      return (text: string): unknown => {
        if (malformedMessage === undefined) return parseInput(parameter.schema, read(text));
        const checked = checkInput(parameter.schema, read(text));
        if ('error' in checked) throw new ApiError(ErrorCode.NotFound, malformedMessage);
        return checked.output;
      };
    });
  const names = readers.length === 0 ? [] : [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
  return (ctx) => {
    const params: Record<string, unknown> = {};
    names.forEach((name, index) => {
      params[name] = readers[index]?.(ctx.params[name] ?? '');
    });
    return params;
  };
}

/** The query, read from the raw query string (each parameter at most once) and validated as one object. */
function queryReader(operation: OperationDeclaration): (ctx: AppContext) => unknown {
  const { query } = operation;
  if (query === undefined) return () => undefined;
  const readers = Object.fromEntries(
    Object.entries(query.entries).map(([name, schema]) => [name, textReader(schema)] as const),
  );
  const names = Object.keys(readers);
  return (ctx) => {
    const texts = readQueryParameters(ctx.querystring, names);
    const input: Record<string, unknown> = {};
    for (const [name, text] of Object.entries(texts)) {
      if (text !== undefined) input[name] = readers[name]?.(text);
    }
    return parseInput(query, input);
  };
}
