import { describe, expectTypeOf, it } from 'vitest';
import type { ListPlantsQuery } from '../list.js';
import type { NewPlant, StoredPlant } from '../plant.js';
import type { WebhookDelivery } from '../webhook.js';
import type { BodyOf, OperationInput, PathParametersOf, QueryOf, SuccessBodyOf } from './operation.js';
import type { Operations } from './operations.js';

describe('what an operation declares, as types', () => {
  it('gives path parameters by template name, int64 ids as bigint and webhook ids as text', () => {
    expectTypeOf<PathParametersOf<Operations['getPlant']>>().toEqualTypeOf<{ readonly id: bigint }>();
    expectTypeOf<PathParametersOf<Operations['resendWebhookDelivery']>>().toEqualTypeOf<{
      readonly id: string;
      readonly deliveryId: bigint;
    }>();
    // Query parameters are not path parameters.
    expectTypeOf<PathParametersOf<Operations['listWebhookDeliveries']>>().toEqualTypeOf<{ readonly id: string }>();
    expectTypeOf<PathParametersOf<Operations['listPlants']>>().toEqualTypeOf<Record<never, never>>();
  });

  it('gives the query and body as validated, undefined where there is none', () => {
    expectTypeOf<QueryOf<Operations['listPlants']>>().toEqualTypeOf<ListPlantsQuery>();
    expectTypeOf<QueryOf<Operations['getPlant']>>().toEqualTypeOf<undefined>();
    expectTypeOf<BodyOf<Operations['createPlant']>>().toEqualTypeOf<NewPlant>();
    expectTypeOf<OperationInput<Operations['createPlant']>['body']>().toEqualTypeOf<NewPlant>();
    expectTypeOf<BodyOf<Operations['listPlants']>>().toEqualTypeOf<undefined>();
  });

  it('gives the success body, undefined for a 204', () => {
    expectTypeOf<SuccessBodyOf<Operations['getPlant']>>().toEqualTypeOf<StoredPlant>();
    expectTypeOf<SuccessBodyOf<Operations['listPlants']>>().toEqualTypeOf<StoredPlant[]>();
    expectTypeOf<SuccessBodyOf<Operations['resendWebhookDelivery']>>().toEqualTypeOf<WebhookDelivery>();
    expectTypeOf<SuccessBodyOf<Operations['deletePlant']>>().toEqualTypeOf<undefined>();
  });
});
