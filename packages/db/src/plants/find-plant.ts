import type { StoredPlant } from '@plant-store/schema';
import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { toStoredPlant } from './plant-record.js';

/** The stored plant with this id, or null. */
export async function findPlant(prisma: PrismaClient, id: bigint): Promise<StoredPlant | null> {
  try {
    const row = await prisma.plant.findUnique({ where: { id }, select: { id: true, name: true, tag: true } });
    return row && toStoredPlant(row);
  } catch (error) {
    throw translateError(error);
  }
}
