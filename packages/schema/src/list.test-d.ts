import { describe, expectTypeOf, it } from 'vitest';
import type { ListPlantsQuery, ListPlantsQueryInput, PlantList } from './list.js';
import type { StoredPlant } from './plant.js';

describe('list types', () => {
  it('ListPlantsQuery always has a limit; after is a bigint', () => {
    expectTypeOf<ListPlantsQuery>().toEqualTypeOf<{ limit: number; tag?: string; after?: bigint }>();
  });

  it('ListPlantsQueryInput makes every field optional', () => {
    expectTypeOf<Record<never, never>>().toExtend<ListPlantsQueryInput>();
    expectTypeOf<ListPlantsQueryInput['after']>().toEqualTypeOf<bigint | number | undefined>();
  });

  it('PlantList is an array of stored plants', () => {
    expectTypeOf<PlantList>().toEqualTypeOf<StoredPlant[]>();
  });
});
