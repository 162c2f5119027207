import { parseJson } from '@plant-store/schema';

/** The running service and a token that may create plants and manage webhooks. */
export interface ServiceApi {
  readonly url: string;
  readonly token: string;
  /** The service process: its CPU time is read during the backlog. */
  readonly pid: number;
}

/** An answered `POST /plants`. */
export interface CreateAnswer {
  readonly status: number;
  /** performance.now() when the status line and headers arrived. */
  readonly answeredAt: number;
}

/** `POST /webhooks {url, eventTypes?}`: the new subscription's id. */
export async function subscribe(api: ServiceApi, receiverUrl: string, eventTypes?: readonly string[]): Promise<string> {
  const response = await fetch(`${api.url}/webhooks`, {
    method: 'POST',
    headers: jsonHeaders(api),
    body: JSON.stringify({ url: receiverUrl, ...(eventTypes === undefined ? {} : { eventTypes }) }),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST /webhooks answered ${response.status}: ${text}`);
  const body = parseJson(text);
  if (typeof body !== 'object' || body === null || !('id' in body) || typeof body.id !== 'string') {
    throw new Error(`POST /webhooks answered 201 without an id: ${text}`);
  }
  return body.id;
}

/** `DELETE /webhooks/{id}`: so that a finished stage's subscription takes no share of the next one's. */
export async function unsubscribe(api: ServiceApi, webhookId: string): Promise<void> {
  const response = await fetch(`${api.url}/webhooks/${webhookId}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${api.token}` },
  });
  const text = await response.text();
  if (response.status !== 204) throw new Error(`DELETE /webhooks/${webhookId} answered ${response.status}: ${text}`);
}

/** `POST /plants` with `body`; rejects only when no answer came (connection error). */
export async function createPlant(api: ServiceApi, body: string): Promise<CreateAnswer> {
  const response = await fetch(`${api.url}/plants`, { method: 'POST', headers: jsonHeaders(api), body });
  const answeredAt = performance.now();
  // Read to the end, so the keep-alive connection is free for the next request.
  await response.arrayBuffer();
  return { status: response.status, answeredAt };
}

/** `PATCH /plants/{id}` with the merge patch `body`; rejects only when no answer came (connection error). */
export async function updatePlant(api: ServiceApi, id: bigint, body: string): Promise<CreateAnswer> {
  const response = await fetch(`${api.url}/plants/${id}`, { method: 'PATCH', headers: jsonHeaders(api), body });
  const answeredAt = performance.now();
  await response.arrayBuffer();
  return { status: response.status, answeredAt };
}

function jsonHeaders(api: ServiceApi): Record<string, string> {
  return { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' };
}
