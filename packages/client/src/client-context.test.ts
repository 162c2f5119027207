import { operations } from '@plant-store/schema';
import { describe, expect, it } from 'vitest';
import { type ClientContext, operationTarget } from './client-context.js';
import { DEFAULT_RETRY_POLICY } from './retry-policy.js';

const context: ClientContext = {
  baseUrl: new URL('https://store.example.com/prefix/'),
  transport: { fetch: globalThis.fetch, token: 'pst_x', timeoutMs: 1000, retry: DEFAULT_RETRY_POLICY },
};

describe('operationTarget', () => {
  it("takes the method, path and success status from the contract's declaration, below the base URL's prefix", () => {
    expect(operationTarget(context, operations.createWebhook, {})).toEqual({
      method: 'POST',
      url: new URL('https://store.example.com/prefix/webhooks'),
      successStatus: 201,
    });
    expect(operationTarget(context, operations.deletePlant, { id: 7n })).toMatchObject({
      method: 'DELETE',
      successStatus: 204,
    });
  });

  it('fills every {parameter} of the path, ids exact and text percent-encoded', () => {
    const target = operationTarget(context, operations.resendWebhookDelivery, {
      id: 'a b/c',
      deliveryId: 2n ** 63n - 1n,
    });
    expect(target.url.href).toBe(
      'https://store.example.com/prefix/webhooks/a%20b%2Fc/deliveries/9223372036854775807/resend',
    );
    expect(operationTarget(context, operations.getPlant, { id: -(2n ** 63n) }).url.pathname).toBe(
      '/prefix/plants/-9223372036854775808',
    );
  });
});
