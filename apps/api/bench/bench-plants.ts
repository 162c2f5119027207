/** The plants the bench creates: every id new, so that every create is a real insert. */

export interface BenchPlant {
  readonly id: bigint;
  readonly name: string;
  readonly tag: string | null;
}

/** One id in 16 lies above 2^62, far past 2^53 where a JSON number stops being exact. */
const LARGE_ID_EVERY = 16n;
const LARGE_ID_BASE = 1n << 62n;

/**
 * Ids that never repeat within one sequence: a counter below 2^53, and every 16th value of it
 * lifted by 2^62 (so the two ranges cannot meet).
 */
export function createIdSequence(): () => bigint {
  let counter = 0n;
  return () => {
    counter += 1n;
    return counter % LARGE_ID_EVERY === 0n ? LARGE_ID_BASE + counter : counter;
  };
}

/** A plant of typical size; one in five has no tag. */
export function benchPlant(id: bigint): BenchPlant {
  return { id, name: `Bench plant ${id}`, tag: id % 5n === 0n ? null : 'bench' };
}

/** The request body for `POST /plants`, ids written as exact JSON integers. */
export function plantJson(plant: BenchPlant): string {
  const tag = plant.tag === null ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${tag}}`;
}

/** Well-formed JSON that fails validation (an empty name): a 400 after authentication and parsing. */
export function invalidPlantJson(plant: BenchPlant): string {
  return plantJson({ ...plant, name: '' });
}
