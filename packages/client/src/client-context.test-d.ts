import { operations } from '@plant-store/schema';
import { describe, expectTypeOf, it } from 'vitest';
import { type ClientContext, type OperationTarget, operationTarget } from './client-context.js';

declare const context: ClientContext;

describe('operationTarget', () => {
  it("takes exactly the path's parameters, typed as the contract validates them", () => {
    expectTypeOf(operationTarget(context, operations.getPlant, { id: 1n })).toEqualTypeOf<OperationTarget>();
    // @ts-expect-error -- {id} is missing
    operationTarget(context, operations.getPlant, {});
    // @ts-expect-error -- a plant id is a bigint, never a number
    operationTarget(context, operations.getPlant, { id: 1 });
    // @ts-expect-error -- deliveryId is missing
    operationTarget(context, operations.resendWebhookDelivery, { id: 'x' });
  });
});
