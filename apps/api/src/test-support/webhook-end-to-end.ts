import { stringifyJson } from '@plant-store/schema';
import { expect } from 'vitest';
import { request } from './test-service.js';

// What the end-to-end webhook suites share (webhook-delivery*.test.ts).

/** Fast settings for tests: receivers on loopback, retries in milliseconds. */
export const FAST_WEBHOOKS = {
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOKS_POLL_MS: '50',
  WEBHOOKS_RETRY_SCHEDULE: '100ms,200ms',
  WEBHOOKS_TIMEOUT_MS: '1000',
  WEBHOOKS_LEASE_MS: '2000',
};

export const SCOPES = ['plants:read', 'plants:write', 'webhooks:manage'];

export interface Subscription {
  readonly id: string;
  readonly secret: string;
}

export async function subscribe(baseUrl: string, token: string, url: string): Promise<Subscription> {
  const response = await request(baseUrl, '/webhooks', { body: JSON.stringify({ url }), token });
  expect(response.status).toBe(201);
  const body = response.body as { id: string; secret: string };
  return { id: body.id, secret: body.secret };
}

export async function createPlant(baseUrl: string, token: string, plant: { id: bigint; name: string; tag?: string }) {
  const response = await request(baseUrl, '/plants', { body: stringifyJson(plant), token });
  expect(response.status).toBe(200);
  return response;
}

export interface Delivery {
  readonly id: bigint;
  readonly eventId: string;
  readonly plantId: bigint;
  readonly status: string;
  readonly attempts: Array<{ statusCode?: bigint; error?: string }>;
}

export async function deliveries(baseUrl: string, token: string, webhookId: string): Promise<Delivery[]> {
  const response = await request(baseUrl, `/webhooks/${webhookId}/deliveries?limit=100`, { token });
  expect(response.status).toBe(200);
  return response.body as Delivery[];
}

/** Polls `check` until it returns a value (or times out): for state the dispatcher reaches soon. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
