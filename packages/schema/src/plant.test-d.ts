import type * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import type { NewPlant, NewPlantInput, NewPlantSchema, Plant, PlantSchema, StoredPlant } from './plant.js';

describe('NewPlant', () => {
  it('is { id: bigint; name: string; tag?: string }', () => {
    expectTypeOf<NewPlant>().toEqualTypeOf<{ id: bigint; name: string; tag?: string }>();
  });

  it('has a tag that may be absent but is never undefined (exactOptionalPropertyTypes)', () => {
    expectTypeOf<NewPlant>().not.toEqualTypeOf<{
      id: bigint;
      name: string;
      tag?: string | undefined;
    }>();
    // @ts-expect-error a present tag must be a string
    const withUndefinedTag: NewPlant = { id: 1n, name: 'Fern', tag: undefined };
    expectTypeOf(withUndefinedTag).toEqualTypeOf<NewPlant>();
  });

  it('never holds the id as a number', () => {
    expectTypeOf<NewPlant['id']>().toEqualTypeOf<bigint>();
    // @ts-expect-error ids are bigints inside the program
    const numberId: NewPlant = { id: 1, name: 'Fern' };
    expectTypeOf(numberId).toEqualTypeOf<NewPlant>();
  });

  it('is what NewPlantSchema outputs', () => {
    expectTypeOf<v.InferOutput<typeof NewPlantSchema>>().toEqualTypeOf<NewPlant>();
  });
});

describe('NewPlantInput', () => {
  it('takes the id as a bigint or a (safe-integer) number', () => {
    expectTypeOf<NewPlantInput['id']>().toEqualTypeOf<bigint | number>();
    expectTypeOf<NewPlantInput>().toEqualTypeOf<{
      id: bigint | number;
      name: string;
      tag?: string;
    }>();
  });
});

describe('Plant and StoredPlant', () => {
  it('Plant is { name: string; tag?: string }, without id', () => {
    expectTypeOf<Plant>().toEqualTypeOf<{ name: string; tag?: string }>();
    expectTypeOf<v.InferOutput<typeof PlantSchema>>().toEqualTypeOf<Plant>();
  });

  it('StoredPlant is the NewPlant shape', () => {
    expectTypeOf<StoredPlant>().toEqualTypeOf<{ id: bigint; name: string; tag?: string }>();
  });
});
