import type { NewPlant } from '@plant-store/schema';
import { DatabaseUnavailableError, PlantConflictError } from '../errors.js';
import { isUnavailable, translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type CreatePlantResult, createPlant } from './create-plant.js';
import { findPlantRows } from './find-plant.js';
import { createGroupCommit, type GroupCommitOptions, type Pending } from './group-commit.js';
import { insertPlants, type PlantInsert } from './insert-plants.js';
import { hasSameContent, type PlantRow, toStoredPlant } from './plant-record.js';

export interface PlantWriterOptions extends Omit<GroupCommitOptions, 'noun'> {
  /**
   * Called after each statement that recorded webhook events has committed, before its creates
   * are answered (see openDatabase's onWebhookEvents).
   */
  readonly onEvents?: () => void;
}

type PendingCreate = Pending<PlantInsert, CreatePlantResult>;

export interface PlantWriter {
  /** The plant, with the traceparent its webhook event keeps and its creating team when known (see PlantInsert). */
  create(plant: PlantInsert): Promise<CreatePlantResult>;
  /** Refuses new creates, and resolves once every queued and running one is answered. */
  close(): Promise<void>;
}

/**
 * Group commit of creates (see createGroupCommit): one multi-row `INSERT ... ON CONFLICT (id) DO
 * NOTHING RETURNING id` with the plants' events (see insertPlants) for every create of a batch.
 * Every caller is still answered exactly as createPlant answers: `created` for the row it
 * inserted; a replay or a PlantConflictError when its id was already stored, judged against the
 * committed row, including a row written earlier in the same batch. Nothing resolves before its
 * statement has committed.
 */
export function createPlantWriter(sql: SqlRunner, options: PlantWriterOptions): PlantWriter {
  function notifyEvents(): void {
    try {
      options.onEvents?.();
    } catch {
      // A failing listener must not fail creates that have committed.
    }
  }
  const group = createGroupCommit<PlantInsert, CreatePlantResult>({ ...options, noun: 'creates' }, (batch) =>
    writeBatch({ sql, notifyEvents }, batch),
  );
  return { create: (plant) => group.submit(plant), close: () => group.close() };
}

/** What writing a batch takes. */
interface WriteContext {
  readonly sql: SqlRunner;
  /** Called after a statement that recorded webhook events has committed, before answering. */
  readonly notifyEvents: () => void;
}

/**
 * Writes one batch and settles each of its creates; never throws. Resolves to the
 * DatabaseUnavailableError when the database was out of reach, else to undefined.
 */
async function writeBatch(context: WriteContext, batch: readonly PendingCreate[]): Promise<unknown> {
  let insertedVersions: Map<bigint, bigint>;
  try {
    const inserted = await insertPlants(
      context.sql,
      batch.map(({ request }) => request),
    );
    insertedVersions = inserted.versions;
    if (inserted.events > 0) context.notifyEvents();
  } catch (error) {
    if (isUnavailable(error)) {
      const unavailable = translateError(error);
      for (const pending of batch) pending.reject(unavailable);
      return unavailable;
    }
    // Something in one row failed the whole statement: write each on its own, so that only
    // the create at fault fails.
    if (batch.length === 1) {
      const [only] = batch as [PendingCreate];
      only.reject(translateError(error));
      return undefined;
    }
    const outcomes = await Promise.all(batch.map((pending) => writeAlone(context, pending)));
    return outcomes.find((unavailable) => unavailable !== undefined);
  }

  // A create whose id is alone in the batch and came back inserted it. Every other create (its
  // id was stored already, or came more than once in this batch) is judged by the committed row.
  const occurrences = new Map<bigint, number>();
  for (const { request } of batch) occurrences.set(request.id, (occurrences.get(request.id) ?? 0) + 1);
  const others: PendingCreate[] = [];
  for (const pending of batch) {
    const { id } = pending.request;
    const version = insertedVersions.get(id);
    if (version !== undefined && occurrences.get(id) === 1) {
      pending.resolve({ plant: toStoredPlant(rowOf(pending.request)), version, created: true });
    } else {
      others.push(pending);
    }
  }
  if (others.length === 0) return undefined;
  let stored: Map<bigint, PlantRow>;
  try {
    stored = await findPlantRows(context.sql, [...new Set(others.map(({ request }) => request.id))]);
  } catch (error) {
    const failure = translateError(error);
    for (const pending of others) pending.reject(failure);
    return failure instanceof DatabaseUnavailableError ? failure : undefined;
  }
  await Promise.all(
    others.map(async (pending) => {
      const row = stored.get(pending.request.id);
      if (row === undefined) {
        // Deleted between our insert and our read: start over on its own.
        await writeAlone(context, pending);
      } else if (hasSameContent(row, pending.request)) {
        // Of several same-content creates of an id this batch inserted, the first made it.
        pending.resolve({
          plant: toStoredPlant(row),
          version: row.version,
          created: insertedVersions.delete(pending.request.id),
        });
      } else {
        pending.reject(new PlantConflictError(pending.request.id));
      }
    }),
  );
  return undefined;
}

/**
 * Writes one create on its own (createPlant: insert, else judge the stored row) and settles it.
 * Resolves to the DatabaseUnavailableError when that is how it failed, else to undefined.
 */
async function writeAlone(context: WriteContext, pending: PendingCreate): Promise<unknown> {
  try {
    pending.resolve(await createPlant(context.sql, pending.request, context.notifyEvents));
    return undefined;
  } catch (failure) {
    pending.reject(failure);
    return failure instanceof DatabaseUnavailableError ? failure : undefined;
  }
}

function rowOf(plant: NewPlant): Omit<PlantRow, 'version'> {
  return { id: plant.id, name: plant.name, tag: plant.tag ?? null };
}
