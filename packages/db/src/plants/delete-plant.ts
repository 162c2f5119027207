import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';

/** Deletes the plant with this id; false when there was none. Committed when it resolves. */
export async function deletePlant(prisma: PrismaClient, id: bigint): Promise<boolean> {
  try {
    const { count } = await prisma.plant.deleteMany({ where: { id } });
    return count > 0;
  } catch (error) {
    throw translateError(error);
  }
}
