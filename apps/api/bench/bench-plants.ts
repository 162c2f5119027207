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

/**
 * The plants the reads read: created (through the service) before the read scenarios, at ids
 * 2^61 + index, a range the create sequence never reaches; ten tags, one in turn, so that each
 * tag holds a tenth of them spread over the whole range.
 */
export const READ_SET_SIZE = 10_000;
const READ_SET_BASE = 1n << 61n;
const READ_TAGS = 10;
/** What a page of the listing scenario holds (the query's limit). */
export const READ_PAGE_LIMIT = 20;

export function readSetPlant(index: number): BenchPlant {
  return { id: READ_SET_BASE + BigInt(index), name: `Read plant ${index}`, tag: `read-${index % READ_TAGS}` };
}

/** An id of the read set, uniformly at random. */
export function randomReadId(): bigint {
  return READ_SET_BASE + BigInt(Math.floor(Math.random() * READ_SET_SIZE));
}

/** A page of the listing: after a random id of the read set, half of them of one random tag. */
export interface PageQuery {
  readonly after: bigint;
  readonly tag: string | undefined;
}

export function randomPageQuery(): PageQuery {
  const tag = Math.random() < 0.5 ? undefined : `read-${Math.floor(Math.random() * READ_TAGS)}`;
  return { after: randomReadId(), tag };
}

/** `GET /plants?...` for a page query, as a client writes it. */
export function pagePath({ after, tag }: PageQuery): string {
  const filter = tag === undefined ? '' : `&tag=${tag}`;
  return `/plants?limit=${READ_PAGE_LIMIT}${filter}&after=${after}`;
}
