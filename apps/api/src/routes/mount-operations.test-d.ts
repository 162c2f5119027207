import type Router from '@koa/router';
import type { ListPlantsQuery, NewPlant, StoredPlant, WebhookDelivery } from '@plant-store/schema';
import { describe, expectTypeOf, it } from 'vitest';
import type { AppState } from '../http/app-state.js';
import { type EncodedPage, type Handlers, mountOperations, type Page, type Versioned } from './mount-operations.js';

declare const router: Router<AppState>;
declare const handlers: Handlers;
const options = { auth: { authenticate: async () => null }, bodyLimitBytes: 1024 };

describe('mountOperations', () => {
  it('takes one handler for each declared operation', () => {
    mountOperations(router, handlers, options);
  });

  it('refuses a declared operation without a handler', () => {
    const { getPlant: _, ...withoutGetPlant } = handlers;
    // @ts-expect-error getPlant is declared, and has no handler
    mountOperations(router, withoutGetPlant, options);
  });

  it('refuses a handler that no declaration names', () => {
    // @ts-expect-error no operation is declared as getPlants
    mountOperations(router, { ...handlers, getPlants: handlers.getPlant }, options);
  });
});

describe('a handler', () => {
  it('gets its input typed from the declaration: path ids as bigint, the query and body as validated', () => {
    expectTypeOf<Parameters<Handlers['getPlant']>[0]['params']>().toEqualTypeOf<{ readonly id: bigint }>();
    expectTypeOf<Parameters<Handlers['resendWebhookDelivery']>[0]['params']>().toEqualTypeOf<{
      readonly id: string;
      readonly deliveryId: bigint;
    }>();
    expectTypeOf<Parameters<Handlers['listPlants']>[0]['query']>().toEqualTypeOf<ListPlantsQuery>();
    expectTypeOf<Parameters<Handlers['createPlant']>[0]['body']>().toEqualTypeOf<NewPlant>();
  });

  it('answers the declared success body, a page for a paged listing, the body and its version for an ETag, nothing for a 204', () => {
    expectTypeOf<ReturnType<Handlers['getPlant']>>().toEqualTypeOf<Promise<Versioned<StoredPlant>>>();
    expectTypeOf<ReturnType<Handlers['listPlants']>>().toEqualTypeOf<Promise<Page<StoredPlant> | EncodedPage>>();
    expectTypeOf<ReturnType<Handlers['resendWebhookDelivery']>>().toEqualTypeOf<Promise<WebhookDelivery>>();
    expectTypeOf<ReturnType<Handlers['deletePlant']>>().toEqualTypeOf<Promise<undefined>>();
    // @ts-expect-error getPlant answers a plant, not a webhook
    const answersWebhook: Handlers['getPlant'] = async () => ({
      value: { id: 'x', url: 'https://x', createdAt: '' },
      version: 1n,
    });
    expectTypeOf(answersWebhook).toBeFunction();
  });
});
