import type { StoredPlant } from '@plant-store/schema';
import { DatabaseUnavailableError } from '../errors.js';
import { isUnavailable, translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { findPlantRows } from './find-plant.js';
import { createGroupCommit, type GroupCommitOptions, type Pending } from './group-commit.js';
import { hasSameContent, toStoredPlant } from './plant-record.js';
import { type PlantUpdate, patched, updatePlants } from './update-plants.js';

/** What became of an update. */
export type UpdatePlantResult =
  /** Changed: the plant as it is now, with its new version. */
  | { readonly outcome: 'updated' | 'unchanged'; readonly plant: StoredPlant; readonly version: bigint }
  /** No plant has this id. */
  | { readonly outcome: 'missing' }
  /** The plant's version is none of those If-Match named: it has `version`. */
  | { readonly outcome: 'mismatch'; readonly version: bigint };

export interface PlantUpdaterOptions extends Omit<GroupCommitOptions, 'noun'> {
  /** Called after a statement that queued events for the fan-out has committed, before answering. */
  readonly onEvents?: () => void;
}

export interface PlantUpdater {
  update(update: PlantUpdate): Promise<UpdatePlantResult>;
  close(): Promise<void>;
}

type PendingUpdate = Pending<PlantUpdate, UpdatePlantResult>;

/** Rounds for one update that keeps losing races (its plant changed under it, over and over). */
const MAX_ATTEMPTS = 3;

/**
 * Group commit of updates, as creates have (see createGroupCommit): the updates of a turn go as one
 * UPDATE_PLANTS_SQL statement, each id once in it (a second update of an id goes in the next
 * statement, after the first). An update the statement did not apply is judged by the committed row:
 * missing (404), another version than If-Match named (412), or a patch that changes nothing
 * (answered 200, the plant and its version as they are, nothing written); one whose row changed
 * between (a race) is tried again on its own.
 */
export function createPlantUpdater(sql: SqlRunner, options: PlantUpdaterOptions): PlantUpdater {
  const notifyEvents = () => {
    try {
      options.onEvents?.();
    } catch {
      // A failing listener must not fail updates that have committed.
    }
  };
  const group = createGroupCommit<PlantUpdate, UpdatePlantResult>({ ...options, noun: 'updates' }, async (batch) => {
    let rest = [...batch];
    while (rest.length > 0) {
      // Each id once per statement: the rest wait for the next.
      const seen = new Set<bigint>();
      const now: PendingUpdate[] = [];
      const later: PendingUpdate[] = [];
      for (const pending of rest) {
        if (seen.has(pending.request.id)) later.push(pending);
        else {
          seen.add(pending.request.id);
          now.push(pending);
        }
      }
      const unavailable = await writeUpdates(sql, now, notifyEvents);
      if (unavailable !== undefined) {
        for (const pending of later) pending.reject(unavailable);
        return unavailable;
      }
      rest = later;
    }
    return undefined;
  });
  return { update: (update) => group.submit(update), close: () => group.close() };
}

/** One statement for updates of distinct ids, each settled; the DatabaseUnavailableError when that is how it failed. */
async function writeUpdates(
  sql: SqlRunner,
  batch: readonly PendingUpdate[],
  notifyEvents: () => void,
): Promise<unknown> {
  let pendingRounds = batch.map((pending) => ({ pending, attempts: 0 }));
  while (pendingRounds.length > 0) {
    let applied: Awaited<ReturnType<typeof updatePlants>>;
    let current: Awaited<ReturnType<typeof findPlantRows>>;
    try {
      applied = await updatePlants(
        sql,
        pendingRounds.map(({ pending }) => pending.request),
      );
      if (applied.events > 0) notifyEvents();
      const notApplied = pendingRounds.filter(({ pending }) => !applied.rows.has(pending.request.id));
      current =
        notApplied.length === 0
          ? new Map()
          : await findPlantRows(
              sql,
              notApplied.map(({ pending }) => pending.request.id),
            );
    } catch (error) {
      const failure = translateError(error);
      if (isUnavailable(error) || pendingRounds.length === 1) {
        for (const { pending } of pendingRounds) pending.reject(failure);
        return failure instanceof DatabaseUnavailableError ? failure : undefined;
      }
      // One update failed the whole statement: each on its own, so that only the one at fault fails.
      const outcomes = await Promise.all(
        pendingRounds.map(({ pending }) => writeUpdates(sql, [pending], notifyEvents)),
      );
      return outcomes.find((unavailable) => unavailable !== undefined);
    }
    const retry: typeof pendingRounds = [];
    for (const round of pendingRounds) {
      const { request } = round.pending;
      const row = applied.rows.get(request.id);
      if (row !== undefined) {
        round.pending.resolve({ outcome: 'updated', plant: toStoredPlant(row), version: row.version });
        continue;
      }
      const stored = current.get(request.id);
      if (stored === undefined) round.pending.resolve({ outcome: 'missing' });
      else if (request.ifMatch !== undefined && !request.ifMatch.includes(stored.version)) {
        round.pending.resolve({ outcome: 'mismatch', version: stored.version });
      } else if (hasSameContent(stored, toStoredPlant(patched(stored, request.patch)))) {
        round.pending.resolve({ outcome: 'unchanged', plant: toStoredPlant(stored), version: stored.version });
      } else if (round.attempts + 1 >= MAX_ATTEMPTS) {
        round.pending.reject(
          new DatabaseUnavailableError({ cause: new Error(`plant ${request.id} kept changing while being updated`) }),
        );
      } else {
        retry.push({ pending: round.pending, attempts: round.attempts + 1 });
      }
    }
    pendingRounds = retry;
  }
  return undefined;
}
