import { parseJson } from '@plant-store/schema';
import type { SentUpdate } from './failover-load.js';

/** The failover suite's check of the updates it sent: no update answered 200 is lost. */

export interface UpdatesChecked {
  /** Plants with at least one update answered 200. */
  readonly plants: number;
  /** Updates answered 200. */
  readonly acknowledged: number;
  /** Of those plants, the ones deleted since (their last acknowledged update superseded by a delete). */
  readonly deleted: number;
  /** What is wrong, one line each: an acknowledged update not stored, or answered with another name. */
  readonly lost: string[];
}

/**
 * Compares the updates sent (a plant's one after another) with the names stored. For each plant,
 * the last update answered 200 must be what is stored, unless an update sent after it (answered
 * otherwise: it may have happened) or a delete superseded it. An answer of 200 carries the name
 * it sent.
 */
export function checkUpdates(
  updates: readonly SentUpdate[],
  storedNames: ReadonlyMap<bigint, string>,
  deletedSince: (id: bigint) => boolean,
): UpdatesChecked {
  const byPlant = new Map<bigint, SentUpdate[]>();
  for (const update of updates) {
    const list = byPlant.get(update.id);
    if (list) list.push(update);
    else byPlant.set(update.id, [update]);
  }
  const lost: string[] = [];
  let plants = 0;
  let acknowledged = 0;
  let deleted = 0;
  for (const [id, list] of byPlant) {
    const last = list.findLastIndex((update) => update.answer.status === 200);
    for (const update of list.filter((entry) => entry.answer.status === 200)) {
      acknowledged++;
      const answered = answeredName(update);
      if (answered !== update.name) lost.push(`${id}: "${update.name}" answered 200 with the name "${answered}"`);
    }
    if (last < 0) continue;
    plants++;
    const stored = storedNames.get(id);
    if (stored === undefined) {
      if (deletedSince(id)) deleted++;
      else lost.push(`${id}: "${list[last]?.name}" answered 200, the plant is not stored`);
      continue;
    }
    const possible = list.slice(last).map((update) => update.name);
    if (!possible.includes(stored)) {
      lost.push(`${id}: "${list[last]?.name}" answered 200 (then ${possible.length - 1} not), "${stored}" stored`);
    }
  }
  return { plants, acknowledged, deleted, lost };
}

function answeredName(update: SentUpdate): unknown {
  try {
    return (parseJson(update.answer.body) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}
