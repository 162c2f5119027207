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

/** `<baseUrl>plants`: the collection. */
export function plantsUrl(context: ClientContext): URL {
  return new URL('plants', context.baseUrl);
}

/** `<baseUrl>plants/<id>`, the id written exactly (`String`, never through a number). */
export function plantUrl(context: ClientContext, id: bigint): URL {
  return new URL(`plants/${encodeURIComponent(String(id))}`, context.baseUrl);
}

/** `<baseUrl>webhooks`: the subscriptions. */
export function webhooksUrl(context: ClientContext): URL {
  return new URL('webhooks', context.baseUrl);
}

/** `<baseUrl>webhooks/<id>`. */
export function webhookUrl(context: ClientContext, id: string): URL {
  return new URL(`webhooks/${encodeURIComponent(id)}`, context.baseUrl);
}

/** `<baseUrl>webhooks/<id>/deliveries`. */
export function deliveriesUrl(context: ClientContext, webhookId: string): URL {
  return new URL(`webhooks/${encodeURIComponent(webhookId)}/deliveries`, context.baseUrl);
}

/** `<baseUrl>webhooks/<id>/deliveries/<deliveryId>/resend`, the id written exactly. */
export function resendUrl(context: ClientContext, webhookId: string, deliveryId: bigint): URL {
  const path = `webhooks/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(String(deliveryId))}/resend`;
  return new URL(path, context.baseUrl);
}
