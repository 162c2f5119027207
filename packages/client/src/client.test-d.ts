import type {
  CreatedToken,
  CreatedWebhook,
  ListPlantsQuery,
  Scope,
  StoredPlant,
  Token,
  Webhook,
  WebhookDelivery,
} from '@plant-store/schema';
import { describe, expectTypeOf, it } from 'vitest';
import {
  createPlantStoreClient,
  isPlantStoreError,
  type NextDeliveriesQuery,
  type NextPlantsQuery,
  type PlantStoreClient,
  PlantStoreError,
  type PlantStoreErrorKind,
  type PlantsPage,
  type WebhookDeliveriesPage,
} from './index.js';

declare const client: PlantStoreClient;

describe('ids are bigint', () => {
  it('in every plant the client returns', () => {
    expectTypeOf(client.createPlant).returns.toEqualTypeOf<Promise<StoredPlant>>();
    expectTypeOf(client.getPlant).returns.toEqualTypeOf<Promise<StoredPlant>>();
    expectTypeOf<StoredPlant['id']>().toEqualTypeOf<bigint>();
    expectTypeOf<PlantsPage['plants'][number]['id']>().toEqualTypeOf<bigint>();
    expectTypeOf(client.plants()).toEqualTypeOf<AsyncGenerator<StoredPlant, void, undefined>>();
  });

  it('in the ids that getPlant and deletePlant take: a number is refused', () => {
    expectTypeOf(client.getPlant).parameter(0).toEqualTypeOf<bigint>();
    expectTypeOf(client.deletePlant).parameter(0).toEqualTypeOf<bigint>();
    // @ts-expect-error -- a number id may already have been rounded
    void client.getPlant(1);
  });

  it('in the next page cursor, which is always set', () => {
    expectTypeOf<PlantsPage['next']>().toEqualTypeOf<NextPlantsQuery | null>();
    expectTypeOf<NextPlantsQuery['after']>().toEqualTypeOf<bigint>();
    expectTypeOf<NextPlantsQuery>().toExtend<ListPlantsQuery>();
    expectTypeOf<NextPlantsQuery>().toExtend<NonNullable<Parameters<PlantStoreClient['listPlants']>[0]>>();
  });

  it('createPlant takes the contract input: a bigint or a safe-integer number id, tag absent or a string', () => {
    expectTypeOf(client.createPlant).parameter(0).toExtend<{ id: bigint | number; name: string; tag?: string }>();
    // @ts-expect-error -- the contract refuses a null tag
    void client.createPlant({ id: 1n, name: 'Fern', tag: null });
    // @ts-expect-error -- exactOptional: an absent tag, not an undefined one
    void client.createPlant({ id: 1n, name: 'Fern', tag: undefined });
  });
});

describe('PlantStoreError', () => {
  it('has readonly status, error, kind and an optional retryAfterSeconds', () => {
    expectTypeOf<PlantStoreError>().toExtend<Error>();
    expectTypeOf<PlantStoreError['status']>().toEqualTypeOf<number>();
    expectTypeOf<PlantStoreError['error']>().toEqualTypeOf<number>();
    expectTypeOf<PlantStoreError['message']>().toEqualTypeOf<string>();
    expectTypeOf<PlantStoreError['kind']>().toEqualTypeOf<PlantStoreErrorKind>();
    expectTypeOf<PlantStoreError['retryAfterSeconds']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<PlantStoreErrorKind>().toEqualTypeOf<
      'error-response' | 'invalid-response' | 'invalid-input' | 'network' | 'timeout' | 'aborted'
    >();
    const error = new PlantStoreError({ kind: 'network', status: 0, error: 0, message: 'x' });
    // @ts-expect-error -- readonly
    error.status = 404;
    // @ts-expect-error -- readonly
    error.error = 404;
  });

  it('isPlantStoreError narrows unknown', () => {
    const value: unknown = undefined;
    if (isPlantStoreError(value)) expectTypeOf(value).toEqualTypeOf<PlantStoreError>();
  });
});

describe('createPlantStoreClient', () => {
  it('needs baseUrl and token; the rest is optional', () => {
    expectTypeOf(
      createPlantStoreClient({ baseUrl: 'http://127.0.0.1:3000', token: 'pst_x' }),
    ).toEqualTypeOf<PlantStoreClient>();
    // @ts-expect-error -- token is required
    createPlantStoreClient({ baseUrl: 'http://127.0.0.1:3000' });
  });
});

describe('webhooks', () => {
  it('return the contract types: string ids and dates, exact int64 delivery and plant ids', () => {
    expectTypeOf(client.createWebhook).returns.toEqualTypeOf<Promise<CreatedWebhook>>();
    expectTypeOf(client.listWebhooks).returns.toEqualTypeOf<Promise<Webhook[]>>();
    expectTypeOf(client.deleteWebhook).returns.toEqualTypeOf<Promise<void>>();
    expectTypeOf(client.resendWebhookDelivery).returns.toEqualTypeOf<Promise<WebhookDelivery>>();
    expectTypeOf(client.listWebhookDeliveries).returns.toEqualTypeOf<Promise<WebhookDeliveriesPage>>();
    expectTypeOf(client.webhookDeliveries('x')).toEqualTypeOf<AsyncGenerator<WebhookDelivery, void, undefined>>();
    expectTypeOf<CreatedWebhook['secret']>().toEqualTypeOf<string>();
    expectTypeOf<WebhookDelivery['id']>().toEqualTypeOf<bigint>();
    expectTypeOf<WebhookDelivery['plantId']>().toEqualTypeOf<bigint>();
    expectTypeOf<WebhookDeliveriesPage['next']>().toEqualTypeOf<NextDeliveriesQuery | null>();
  });

  it('take a delivery id as a bigint only, and a description absent rather than undefined', () => {
    expectTypeOf(client.resendWebhookDelivery).parameter(1).toEqualTypeOf<bigint>();
    // @ts-expect-error -- a number id may already have been rounded
    void client.resendWebhookDelivery('x', 1);
    // @ts-expect-error -- exactOptional: an absent description, not an undefined one
    void client.createWebhook({ url: 'https://hooks.example.com/', description: undefined });
    // @ts-expect-error -- url is required
    void client.createWebhook({ description: 'ops' });
  });
});

describe('tokens', () => {
  it('createToken takes known scopes only and returns the token once; listTokens never has it', () => {
    expectTypeOf(client.createToken).parameter(0).toExtend<{ name: string; scopes: Scope[] }>();
    expectTypeOf(client.createToken).returns.toEqualTypeOf<Promise<CreatedToken>>();
    expectTypeOf(client.listTokens).returns.toEqualTypeOf<Promise<Token[]>>();
    expectTypeOf<Token>().not.toHaveProperty('token');
    expectTypeOf(client.revokeToken).parameter(0).toEqualTypeOf<string>();
  });
});
