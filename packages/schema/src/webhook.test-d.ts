import type * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import type { NewPlant } from './plant.js';
import type {
  CreatedWebhook,
  DeliveryStatus,
  ListDeliveriesQuery,
  ListDeliveriesQueryInput,
  NewWebhook,
  PlantCreatedEvent,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookDeliveryList,
  WebhookDeliverySchema,
  WebhookList,
} from './webhook.js';

describe('webhook types', () => {
  it('NewWebhook is { url; description?; eventTypes? }', () => {
    expectTypeOf<NewWebhook>().toEqualTypeOf<{
      url: string;
      description?: string;
      eventTypes?: ('plant.created' | 'plant.updated' | 'plant.deleted')[];
    }>();
  });

  it('Webhook has string dates and no secret; CreatedWebhook adds the secret', () => {
    expectTypeOf<Webhook>().toEqualTypeOf<{
      id: string;
      url: string;
      description?: string;
      team: string;
      createdAt: string;
      eventTypes?: string[];
      enabled?: boolean;
      disabledAt?: string;
      disabledReason?: string;
      previousSecretExpiresAt?: string;
    }>();
    expectTypeOf<CreatedWebhook>().toEqualTypeOf<{
      id: string;
      url: string;
      description?: string;
      team: string;
      createdAt: string;
      eventTypes?: string[];
      enabled?: boolean;
      disabledAt?: string;
      disabledReason?: string;
      previousSecretExpiresAt?: string;
      secret: string;
    }>();
    expectTypeOf<WebhookList>().toEqualTypeOf<Webhook[]>();
  });

  it('WebhookDelivery has exact int64 ids, a status union and optional dates', () => {
    expectTypeOf<DeliveryStatus>().toEqualTypeOf<'pending' | 'delivered' | 'failed'>();
    expectTypeOf<WebhookDeliveryAttempt>().toEqualTypeOf<{
      attemptedAt: string;
      statusCode?: number;
      latencyMs: number;
      error?: string;
      responseExcerpt?: string;
    }>();
    expectTypeOf<WebhookDelivery>().toEqualTypeOf<{
      id: bigint;
      webhookId: string;
      eventId: string;
      eventType?: string;
      plantId: bigint;
      status: DeliveryStatus;
      nextAttemptAt?: string;
      createdAt: string;
      deliveredAt?: string;
      attempts: WebhookDeliveryAttempt[];
    }>();
    expectTypeOf<WebhookDeliveryList>().toEqualTypeOf<WebhookDelivery[]>();
  });

  it('a delivery read from JSON may carry its int64s as bigint or safe-integer number, and int32s as either', () => {
    type Input = v.InferInput<typeof WebhookDeliverySchema>;
    expectTypeOf<Input['id']>().toEqualTypeOf<bigint | number>();
    expectTypeOf<Input['attempts'][number]['latencyMs']>().toEqualTypeOf<number | bigint>();
  });

  it('ListDeliveriesQuery always has a limit; after is a bigint; status a DeliveryStatus', () => {
    expectTypeOf<ListDeliveriesQuery>().toEqualTypeOf<{ limit: number; after?: bigint; status?: DeliveryStatus }>();
    expectTypeOf<Record<never, never>>().toExtend<ListDeliveriesQueryInput>();
    expectTypeOf<ListDeliveriesQueryInput['after']>().toEqualTypeOf<bigint | number | undefined>();
  });

  it('the event body is a NewPlant', () => {
    expectTypeOf<PlantCreatedEvent>().toEqualTypeOf<NewPlant>();
  });
});
