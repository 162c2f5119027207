import type { NewPlant } from '@plant-store/schema';
import { DatabaseUnavailableError, PlantConflictError } from '../errors.js';
import { isUnavailable, translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type CreatePlantResult, createPlant } from './create-plant.js';
import { findPlantRows } from './find-plant.js';
import { insertPlants, type PlantInsert } from './insert-plants.js';
import { hasSameContent, type PlantRow, toStoredPlant } from './plant-record.js';

export interface PlantWriterOptions {
  /** Most creates written by one statement. */
  readonly maxBatchSize: number;
  /** Most statements in flight at once (at most the connection pool's size). */
  readonly maxConcurrentBatches: number;
  /** Most creates waiting for a statement; more are refused at once (503: overloaded). */
  readonly maxQueued: number;
  /** How long a create may wait for its statement to start; then it is refused (503). */
  readonly maxWaitMs: number;
  /**
   * Called after each statement that recorded webhook events has committed, before its creates
   * are answered (see openDatabase's onWebhookEvents).
   */
  readonly onEvents?: () => void;
}

interface PendingCreate {
  /** With the creating request's traceparent, when traced: its webhook event keeps it. */
  readonly plant: PlantInsert;
  readonly queuedAt: number;
  readonly resolve: (result: CreatePlantResult) => void;
  readonly reject: (error: unknown) => void;
}

export interface PlantWriter {
  /** The plant, with the traceparent its webhook event keeps and its creating team when known (see PlantInsert). */
  create(plant: PlantInsert): Promise<CreatePlantResult>;
  /** Refuses new creates, and resolves once every queued and running one is answered. */
  close(): Promise<void>;
}

function overloaded(reason: string): DatabaseUnavailableError {
  return new DatabaseUnavailableError({ cause: new Error(reason) });
}

/**
 * Group commit: creates that arrive while statements are in flight wait, and go together as
 * one multi-row `INSERT ... ON CONFLICT (id) DO NOTHING RETURNING id` (with the webhook outbox:
 * see insertPlants), a single statement and so a single transaction and a single commit (one
 * WAL flush) for all of them. A lone create is written at once. Every caller is still answered
 * exactly as createPlant answers: `created` for the row it inserted; a replay or a
 * PlantConflictError when its id was already stored, judged against the committed row,
 * including a row written earlier in the same batch. Nothing resolves before its statement has
 * committed.
 */
export function createPlantWriter(sql: SqlRunner, options: PlantWriterOptions): PlantWriter {
  const queue: PendingCreate[] = [];
  let inFlight = 0;
  let pumpScheduled = false;
  let closed = false;
  const idleWaiters: Array<() => void> = [];

  function notifyEvents(): void {
    try {
      options.onEvents?.();
    } catch {
      // A failing listener must not fail creates that have committed.
    }
  }

  function settleIdle(): void {
    if (queue.length === 0 && inFlight === 0) for (const resolve of idleWaiters.splice(0)) resolve();
  }

  /**
   * Starts the queued creates on the next turn of the event loop, not at once: every request
   * that arrived in this turn is queued by then and goes in the same batch. This matters most on
   * PGlite, whose statements run synchronously and block the loop: started at once, a batch would
   * hold only the first request of each turn.
   */
  function schedulePump(): void {
    if (pumpScheduled) return;
    pumpScheduled = true;
    setImmediate(() => {
      pumpScheduled = false;
      pump();
    });
  }

  function pump(): void {
    // Creates that waited too long for a statement are answered 503 now rather than late: a
    // client retries them, instead of holding a connection open behind a slow database. (This
    // runs when a statement ends, so a create waits at most maxWaitMs plus one statement, and a
    // statement at most the driver's query timeout.)
    const deadline = performance.now() - options.maxWaitMs;
    while (queue.length > 0 && (queue[0]?.queuedAt ?? Number.POSITIVE_INFINITY) < deadline) {
      queue.shift()?.reject(overloaded(`waited over ${options.maxWaitMs} ms for the database`));
    }
    while (queue.length > 0 && inFlight < options.maxConcurrentBatches) {
      const batch = queue.splice(0, options.maxBatchSize);
      inFlight++;
      void writeBatch({ sql, notifyEvents }, batch)
        .then((unavailable) => {
          // The database is out of reach: what waits behind this batch would wait a whole
          // timeout more for the same answer. Answer it now (503, retry) instead.
          if (unavailable !== undefined) for (const pending of queue.splice(0)) pending.reject(unavailable);
        })
        .catch((error: unknown) => {
          // writeBatch settles every create itself; this is a last resort against a bug.
          for (const pending of batch) pending.reject(error);
        })
        .finally(() => {
          inFlight--;
          schedulePump();
          settleIdle();
        });
    }
    settleIdle();
  }

  return {
    create(plant) {
      if (closed) return Promise.reject(overloaded('the database is closing'));
      if (queue.length >= options.maxQueued) {
        return Promise.reject(overloaded(`${queue.length} creates are already waiting for the database`));
      }
      return new Promise((resolve, reject) => {
        queue.push({ plant, queuedAt: performance.now(), resolve, reject });
        schedulePump();
      });
    },
    close() {
      closed = true;
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },
  };
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
  let insertedIds: Set<bigint>;
  try {
    const inserted = await insertPlants(
      context.sql,
      batch.map(({ plant }) => plant),
    );
    insertedIds = inserted.ids;
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
  for (const { plant } of batch) occurrences.set(plant.id, (occurrences.get(plant.id) ?? 0) + 1);
  const others: PendingCreate[] = [];
  for (const pending of batch) {
    const { id } = pending.plant;
    if (insertedIds.has(id) && occurrences.get(id) === 1) {
      pending.resolve({ plant: toStoredPlant(rowOf(pending.plant)), created: true });
    } else {
      others.push(pending);
    }
  }
  if (others.length === 0) return undefined;
  let stored: Map<bigint, PlantRow>;
  try {
    stored = await findPlantRows(context.sql, [...new Set(others.map(({ plant }) => plant.id))]);
  } catch (error) {
    const failure = translateError(error);
    for (const pending of others) pending.reject(failure);
    return failure instanceof DatabaseUnavailableError ? failure : undefined;
  }
  await Promise.all(
    others.map(async (pending) => {
      const row = stored.get(pending.plant.id);
      if (row === undefined) {
        // Deleted between our insert and our read: start over on its own.
        await writeAlone(context, pending);
      } else if (hasSameContent(row, pending.plant)) {
        // Of several same-content creates of an id this batch inserted, the first made it.
        pending.resolve({ plant: toStoredPlant(row), created: insertedIds.delete(pending.plant.id) });
      } else {
        pending.reject(new PlantConflictError(pending.plant.id));
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
    pending.resolve(await createPlant(context.sql, pending.plant, context.notifyEvents));
    return undefined;
  } catch (failure) {
    pending.reject(failure);
    return failure instanceof DatabaseUnavailableError ? failure : undefined;
  }
}

function rowOf(plant: NewPlant): PlantRow {
  return { id: plant.id, name: plant.name, tag: plant.tag ?? null };
}
