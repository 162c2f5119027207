import type { HttpMethod, OperationDeclaration, PathParametersOf, SuccessStatus } from '@plant-store/schema';
import type { Transport } from './send-request.js';

/** What every call needs: how to send, and where the service is. */
export interface ClientContext {
  readonly transport: Transport;
  /** The service's base URL, ending in `/`: paths are resolved relative to it, so a prefix is kept. */
  readonly baseUrl: URL;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call, a wait between retries included; it then throws a PlantStoreError of kind `aborted`. */
  readonly signal?: AbortSignal;
}

/** Where and how one operation is sent, as the contract declares it. */
export interface OperationTarget {
  readonly method: HttpMethod;
  readonly url: URL;
  /** The one status that means success. */
  readonly successStatus: SuccessStatus;
}

/**
 * `operation` at `<baseUrl>` + its path, each `{name}` replaced by `params[name]` (ids written
 * exactly, with `String`, never through a number), with its method and success status.
 */
export function operationTarget<TOperation extends OperationDeclaration>(
  context: ClientContext,
  operation: TOperation,
  params: PathParametersOf<TOperation>,
): OperationTarget {
  const values: Readonly<Record<string, unknown>> = params;
  // Relative to the base URL (no leading `/`), so that its path prefix is kept.
  const path = operation.path
    .slice(1)
    .replaceAll(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(values[name])));
  return { method: operation.method, url: new URL(path, context.baseUrl), successStatus: operation.success.status };
}
