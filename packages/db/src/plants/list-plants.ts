import type { ListPlantsQuery, StoredPlant } from '@plant-store/schema';
import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { toStoredPlant } from './plant-record.js';

export interface PlantPage {
  /** At most `limit` plants, ascending by id. */
  readonly plants: StoredPlant[];
  /** Whether more plants follow the last one (with the same tag filter). */
  readonly hasMore: boolean;
}

/**
 * One page of plants in id order: those after `after` (exclusive), with exactly `tag` when
 * given. Reads `limit + 1` rows at most, along the primary key or the (tag, id) index, so
 * that it knows whether another page follows without a second query or a count.
 */
export async function listPlants(prisma: PrismaClient, { limit, tag, after }: ListPlantsQuery): Promise<PlantPage> {
  try {
    const rows = await prisma.plant.findMany({
      where: {
        // `tag = x` written as a range, with the (tag, id) order below: with a plain equality
        // PostgreSQL drops `tag` from the sort key and may walk the primary key filtering on
        // the tag, reading every row after `after` when few of them carry it (seen in
        // list-plants.test.ts). The range keeps (tag, id) as the order, which only the
        // (tag, id) index supplies, so the scan stops after `limit + 1` matching rows.
        ...(tag === undefined ? {} : { tag: { gte: tag, lte: tag } }),
        ...(after === undefined ? {} : { id: { gt: after } }),
      },
      orderBy: tag === undefined ? { id: 'asc' } : [{ tag: 'asc' }, { id: 'asc' }],
      take: limit + 1,
      select: { id: true, name: true, tag: true },
    });
    return { plants: rows.slice(0, limit).map(toStoredPlant), hasMore: rows.length > limit };
  } catch (error) {
    throw translateError(error);
  }
}
