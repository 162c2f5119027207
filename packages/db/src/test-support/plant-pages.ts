import { parseJson, type StoredPlant, stringifyJson } from '@plant-store/schema';
import type { PlantPage } from '../plants/list-plants.js';

/**
 * A page's plants, read back from its JSON with the contract's codec (ids exact), after checking
 * what the page promises about that JSON: it is what the service's own encoder writes for those
 * plants, byte for byte, and `lastId` is the last plant's id.
 */
export function readPage(page: PlantPage): { plants: StoredPlant[]; hasMore: boolean } {
  const plants = parseJson(page.json) as StoredPlant[];
  if (stringifyJson(plants) !== page.json) {
    throw new Error(`the page's JSON is not as stringifyJson writes it: ${page.json}`);
  }
  if (page.lastId !== plants.at(-1)?.id) {
    throw new Error(`the page's lastId ${page.lastId} is not its last plant's id: ${page.json}`);
  }
  return { plants, hasMore: page.hasMore };
}
