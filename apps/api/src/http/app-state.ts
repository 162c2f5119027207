import type { AuthenticatedToken } from '@plant-store/db';
import type { DefaultContext, ParameterizedContext } from 'koa';
import type { Caller } from './caller.js';

/** Per-request data, set by middleware. */
export interface AppState {
  /** This request's id, echoed in X-Request-Id and in its log lines (set by observeRequests). */
  requestId?: string;
  /** The authenticated bearer token (set by bearerAuth, also when it then lacks the scope). */
  token?: AuthenticatedToken;
  /** Who sends the request, once its token carries the route's scopes (set by bearerAuth). */
  caller?: Caller;
  /**
   * When set, failures caused by what the client sent answer this HTTP status whatever their
   * `error` code: the spec's rule for POST /plants, where every such failure is a 400.
   */
  clientFaultStatus?: number;
  /** The request body, parsed by jsonBody with exact int64 numbers. */
  jsonBody?: unknown;
}

export type AppContext = ParameterizedContext<AppState, DefaultContext>;
