import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { ListPlantsQuery, NewPlant } from '@plant-store/schema';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { AuditActor, AuditEventPage } from './audit/audit-records.js';
import { deleteOldAuditEvents, type ListAuditEventsQuery, listAuditEvents } from './audit/list-audit-events.js';
import { lockDataDir } from './data-dir-lock.js';
import { DatabaseUnavailableError, type DataDirLockedError, MigrationsPendingError } from './errors.js';
import { createFeedPageCache } from './events/feed-page-cache.js';
import { currentEventCursor, type EventPage, type ListEventsQuery, listEvents } from './events/list-events.js';
import { PrismaClient } from './generated/prisma/client.js';
import { applyMigrations, type MigrationTarget, pendingMigrations } from './migrate.js';
import {
  type CallInstruments,
  DATABASE_OPERATIONS,
  type ObserveDatabaseCall,
  observed,
  type TraceDatabaseCalls,
} from './observe.js';
import { createPGliteKeepingText } from './pglite-exact-text.js';
import type { CreatePlantResult } from './plants/create-plant.js';
import { type DeletePlantOptions, type DeletePlantResult, deletePlant } from './plants/delete-plant.js';
import {
  type ExportOptions,
  exportPlantsPGlite,
  exportPlantsPostgres,
  type PlantExport,
} from './plants/export-plants.js';
import { importPlantsPGlite } from './plants/import-pglite.js';
import type { ImportLine, ImportOptions, ImportResult } from './plants/import-plants.js';
import { importPlantsPostgres } from './plants/import-postgres.js';
import type { PlantPage } from './plants/list-plants.js';
import { createPlantReader } from './plants/plant-reader.js';
import type { VersionedPlant } from './plants/plant-record.js';
import { createPlantUpdater, type UpdatePlantResult } from './plants/plant-updater.js';
import { createPlantWriter } from './plants/plant-writer.js';
import type { PlantUpdate } from './plants/update-plants.js';
import { type ConnectionEvent, createPostgresPool } from './postgres/postgres-pool.js';
import { withPreparedStatements } from './prepared-statements.js';
import { translateError } from './prisma-errors.js';
import type { SqlRunner } from './sql-runner.js';
import { authenticateToken, listActiveTokens } from './tokens/authenticate-token.js';
import { type IssuedToken, type IssueTokenOptions, issueToken } from './tokens/issue-token.js';
import {
  countTokens,
  type ListTokensOptions,
  listTokens,
  type RevokeTokenOptions,
  revokeToken,
} from './tokens/manage-tokens.js';
import { createTokenDirectory } from './tokens/token-directory.js';
import { type AuthenticatedToken, authenticatedTokenOf, type TokenRecord } from './tokens/token-record.js';
import { createTokenUseRecorder } from './tokens/token-use.js';
import {
  type RotatedSecret,
  rotateWebhookSecret,
  sendWebhookTest,
  updateWebhook,
  type WebhookChangeScope,
  type WebhookPatchInput,
} from './webhooks/change-webhook.js';
import { type ClaimOptions, claimDeliveries } from './webhooks/claim-deliveries.js';
import { createWebhook, type NewWebhookInput } from './webhooks/create-webhook.js';
import { type FanOutOptions, type FanOutResult, fanOutEvents, webhookReceivers } from './webhooks/fan-out-events.js';
import { type ListDeliveriesQuery, listDeliveries, resendDelivery } from './webhooks/list-deliveries.js';
import { deleteWebhook, listWebhooks, type TeamScope } from './webhooks/manage-webhooks.js';
import { createAttemptRecorder, releaseClaim } from './webhooks/record-attempt.js';
import { type ResendDeliveriesInput, type ResentDeliveries, resendDeliveries } from './webhooks/resend-deliveries.js';
import { deleteOldWebhookData, type RetentionOptions, type RetentionResult } from './webhooks/retention.js';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  CreatedWebhook,
  DeliveryPage,
  DeliveryRecord,
  WebhookRecord,
} from './webhooks/webhook-records.js';

/** The embedded database's default folder: `<repository>/.data` (from `src/` and `dist/` alike). */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../../../.data', import.meta.url));

export interface DatabaseOptions {
  /**
   * A PostgreSQL connection URL, libpq's multi-host form with `target_session_attrs` included (see
   * parsePostgresUrl). Without one, the embedded PGlite database in `dataDir`.
   */
  readonly url?: string | undefined;
  /** The embedded database's folder (ignored with `url`). */
  readonly dataDir: string;
  /**
   * Apply pending migrations while opening (default true). False: open only a database that is
   * up to date, else throw MigrationsPendingError (migrations run as a separate step).
   */
  readonly migrate?: boolean;
  /** PostgreSQL connection pool size. */
  readonly poolSize?: number;
  /**
   * PostgreSQL connections for imports and exports, apart from the pool (default 4): each holds one
   * for its whole length, without the statement timeout. One more waits for a connection up to a
   * second, then fails as the database being unavailable (503).
   */
  readonly bulkConnections?: number;
  /** How long to wait for the embedded data folder's lock (see lockDataDir). */
  readonly lockWaitMs?: number;
  /** Called if the embedded data folder's lock is lost while open (see lockDataDir). */
  readonly onLockLost?: (error: DataDirLockedError) => void;
  /** Called after every repository call with its duration (for metrics). */
  readonly observe?: ObserveDatabaseCall;
  /**
   * Brackets every repository call (for traces): see TraceDatabaseCalls. A token lookup is
   * bracketed only when it reaches the database, not when the token cache answers it.
   */
  readonly trace?: TraceDatabaseCalls;
  /**
   * Called synchronously after each create statement that recorded webhook events has
   * committed, before those creates are answered: the webhook dispatcher's nudge (the new
   * events are to be fanned out and delivered now). Never called while no subscription exists, so an idle dispatcher
   * costs the creates nothing.
   */
  readonly onWebhookEvents?: () => void;
  /**
   * How often the tokens' `last_used_at` stamps collected by recordTokenUse are written (one
   * statement each time, and one at close). Default 60 s.
   */
  readonly tokenUseFlushMs?: number;
  /**
   * How long every attempt to a subscription must have failed before it is disabled (see
   * recordAttempts): the service's WEBHOOKS_DISABLE_AFTER_DAYS. Default 5 days; 0: never.
   */
  readonly webhookDisableAfterMs?: number;
  /** A write of those stamps failed (the database is away); they are kept and written next time. */
  readonly onTokenUseFlushError?: (error: unknown) => void;
  /**
   * How often every active token is loaded again (see createTokenDirectory): a token revoked by
   * another process stops authenticating here within this long. Default 5 s.
   */
  readonly tokenRefreshMs?: number;
  /** A reload of the active tokens failed (the database is away): those loaded before stay. */
  readonly onTokenRefreshError?: (error: unknown) => void;
  /**
   * What happens to the PostgreSQL connections: opened, refused by a host, discarded because their
   * host can no longer serve them, and the primary moving to another host (see ConnectionEvent).
   */
  readonly onConnectionEvent?: (event: ConnectionEvent) => void;
  /**
   * Full pages of the event feed kept in memory, in bytes (see createFeedPageCache); 0 keeps none.
   * Default DEFAULT_FEED_PAGE_CACHE_BYTES.
   */
  readonly feedPageCacheBytes?: number;
}

/** What a create knows besides the plant: its request's traceparent, and the team creating it. */
export interface CreatePlantContext {
  /**
   * The W3C traceparent of the request creating it (when traced), stored as is with the plant's
   * webhook event, so that its deliveries can be traced as that request's children.
   */
  readonly traceParent?: string | undefined;
  /** The creating token's team, kept with the plant (not in its wire shape). */
  readonly team?: string | undefined;
}

export type DatabaseEngine = 'postgres' | 'pglite';

/** The repository API: plain records and domain errors, no Prisma types. */
export interface Database {
  readonly engine: DatabaseEngine;
  /** Migrations that opening this database applied (empty when it was up to date). */
  readonly appliedMigrations: readonly string[];
  createPlant(plant: NewPlant, context?: CreatePlantContext): Promise<CreatePlantResult>;
  /** The plant with this id and its version, or null. */
  findPlant(id: bigint): Promise<VersionedPlant | null>;
  /**
   * Applies a merge patch (group-committed as creates are), with its plant.updated event and audit
   * event; see UpdatePlantResult for what became of it.
   */
  updatePlant(update: PlantUpdate): Promise<UpdatePlantResult>;
  /** One page of plants in ascending id order (see listPlants). */
  listPlants(query: ListPlantsQuery): Promise<PlantPage>;
  /**
   * Imports validated lines, all or nothing (see importPlantsPostgres, importPlantsPGlite): throws
   * ImportRejectedError for a line that breaks a rule across lines or against the stored plants, and
   * rethrows whatever the lines throw; either way nothing of it is stored.
   */
  importPlants(lines: AsyncIterable<ImportLine>, options: ImportOptions): Promise<ImportResult>;
  /** Every plant (or one tag's) from one snapshot, in id order (see exportPlantsPostgres, exportPlantsPGlite). */
  exportPlants(options: ExportOptions): Promise<PlantExport>;
  /**
   * Deletes a plant (under If-Match, when given), with its plant.deleted event and who did it in
   * the audit log; see DeletePlantResult.
   */
  deletePlant(id: bigint, actor: AuditActor, options?: DeletePlantOptions): Promise<DeletePlantResult>;
  /** A page of the event feed (see listEvents). */
  listEvents(query: ListEventsQuery): Promise<EventPage>;
  /** Where the feed stands now (see currentEventCursor). */
  currentEventCursor(): Promise<string>;
  /**
   * A new token, recorded in the audit log; TokenNameTakenError when the name is or was taken
   * (ignoring case), TokenLimitError past its team's cap.
   */
  issueToken(options: IssueTokenOptions): Promise<IssuedToken>;
  /**
   * The token's record, or null when it is unknown or revoked; an expired token's record too
   * (the caller judges `expiresAt`). From the directory of active tokens: see createTokenDirectory.
   */
  authenticateToken(token: string): Promise<AuthenticatedToken | null>;
  /** Whether `token` is an active token this process knows: no query (see TokenDirectory.knows). */
  knowsToken(token: string): boolean;
  /** Notes that the token with this id authenticated a request; written in batches (tokenUseFlushMs). */
  recordTokenUse(id: string): void;
  /** Writes the stamps recordTokenUse collected now, rather than at the next interval. */
  flushTokenUse(): Promise<void>;
  /** Tokens, oldest first: the active ones (expired ones included), or every one; one team's or all. */
  listTokens(options?: ListTokensOptions): Promise<TokenRecord[]>;
  /**
   * Revokes the active token named `name` (of `options.team`, when given), recorded in the audit
   * log; TokenNotFoundError when there is none. Refused at once here, elsewhere within the
   * directory's refresh.
   */
  revokeToken(name: string, options: RevokeTokenOptions): Promise<TokenRecord>;
  countTokens(): Promise<number>;
  /** Registers a webhook subscription for its team, recorded in the audit log; WebhookLimitError past the team's cap. */
  createWebhook(input: NewWebhookInput): Promise<CreatedWebhook>;
  /** The subscriptions of one team, or of every team, in creation order (never secrets). */
  listWebhooks(scope?: TeamScope): Promise<WebhookRecord[]>;
  /**
   * Deletes a subscription (of `team`, when given) and its deliveries, recorded in the audit log;
   * false when there was none (or `id` is no UUID).
   */
  deleteWebhook(id: string, options: TeamScope & { readonly actor: AuditActor }): Promise<boolean>;
  /** One page of a subscription's deliveries in ascending id order; null when it does not exist (for `team`). */
  listDeliveries(webhookId: string, query: ListDeliveriesQuery, scope?: TeamScope): Promise<DeliveryPage | null>;
  /**
   * Re-queues, oldest first, up to `limit` of a subscription's deliveries matching `input`, each
   * recorded in the audit log, in one statement; null when that webhook (of `team`) does not exist.
   */
  resendDeliveries(
    webhookId: string,
    input: ResendDeliveriesInput,
    options: TeamScope & { readonly actor: AuditActor },
  ): Promise<ResentDeliveries | null>;
  /**
   * Re-queues a delivery (any status) to be attempted now, recorded in the audit log; null when
   * that webhook (of `team`, when given) has no such delivery.
   */
  resendDelivery(
    webhookId: string,
    deliveryId: bigint,
    options: TeamScope & { readonly actor: AuditActor },
  ): Promise<DeliveryRecord | null>;
  /** Applies a merge patch to a subscription (of `team`), recorded in the audit log; null when there is none. */
  updateWebhook(id: string, patch: WebhookPatchInput, scope: WebhookChangeScope): Promise<WebhookRecord | null>;
  /** A new signing secret, the previous one signing too for the grace period; null when there is no such subscription. */
  rotateWebhookSecret(id: string, gracePeriodSeconds: number, scope: WebhookChangeScope): Promise<RotatedSecret | null>;
  /** Queues a webhook.test event to a subscription, recorded in the audit log; its delivery, or null. */
  sendWebhookTest(id: string, scope: WebhookChangeScope): Promise<DeliveryRecord | null>;
  /** A page of the audit log, one team's or every team's (see listAuditEvents). */
  listAuditEvents(query: ListAuditEventsQuery): Promise<AuditEventPage>;
  /** One batch of the audit log's retention: events older than `olderThanMs` go; how many did. */
  deleteOldAuditEvents(options: { readonly olderThanMs: number; readonly batchSize: number }): Promise<number>;
  /**
   * Writes the deliveries of one batch of webhook events not fanned out yet, one per
   * subscription (see fanOutEvents): the dispatcher's step before it claims.
   */
  fanOutEvents(options: FanOutOptions): Promise<FanOutResult>;
  /** The receivers (URL origins) that have subscriptions (see webhookReceivers). */
  webhookReceivers(): Promise<string[]>;
  /** Leases due deliveries to this caller (see claimDeliveries). */
  claimDeliveries(options: ClaimOptions): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt under its lease; false (nothing written) when the lease was lost.
   * Attempts finishing together are written by one statement (see createAttemptRecorder).
   */
  recordAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean>;
  /** Gives a lease back without an attempt (shutdown). */
  releaseClaim(claim: ClaimedDelivery): Promise<void>;
  /** One batch of the webhook retention job (see deleteOldWebhookData). */
  deleteOldWebhookData(options: RetentionOptions): Promise<RetentionResult>;
  /**
   * Resolves when the database answers a query and takes writes (a primary, not a standby or a
   * read-only session); throws DatabaseUnavailableError otherwise.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Opens the configured database and applies pending migrations. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const opened = options.url ? await openPostgres(options.url, options) : await openPGlite(options);
  return observeCalls(opened, options);
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const applied = await migrateOrCheck({ kind: 'postgres', connectionString: url }, options);
  // The pool is ours, shared by Prisma and by the group-commit writer's batch insert. With several
  // hosts (or target_session_attrs), each new connection finds the one that qualifies.
  const pool = createPostgresPool(
    url,
    {
      max: options.poolSize ?? 16,
      // A request must fail fast (503 + Retry-After, within ~2 s) when the database is down or hung,
      // not hang: bounds the wait for a pooled connection or a new one (per host tried)...
      connectionTimeoutMillis: 1_000,
      // ...makes the server cancel a statement that runs too long (the connection stays usable)...
      statement_timeout: STATEMENT_TIMEOUT_MS,
      // ...and bounds each query on an open one (a dead server leaves sockets open that never
      // answer), a little later than the server's own cancel.
      query_timeout: STATEMENT_TIMEOUT_MS + 100,
      // No JIT for the requests' statements: each reads or writes a few rows, but their generic
      // plans (prepared, parameters unknown) are costed for a third of the table, so once it holds
      // millions of plants a page's statement passed jit_above_cost and was compiled at every
      // execution: 8 ms of the server's CPU for 0.1 ms of work (pages 0.14x at 10 million plants).
      options: '-c jit=off',
    },
    { onConnectionEvent: options.onConnectionEvent },
  );
  // An idle connection that fails (the server restarts) is dropped by the pool and replaced on
  // the next query; without a listener its error would end the process.
  pool.on('error', () => {});
  // Imports and exports run for as long as their data takes: on connections of their own, without
  // the statement timeout, so that they never take the requests' connections.
  const bulkPool = createPostgresPool(
    url,
    {
      max: options.bulkConnections ?? BULK_CONNECTIONS,
      connectionTimeoutMillis: 1_000,
      application_name: BULK_APPLICATION_NAME,
    },
    { onConnectionEvent: options.onConnectionEvent },
  );
  bulkPool.on('error', () => {});
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return await createDatabase(
    'postgres',
    prisma,
    withPreparedStatements(pool),
    applied,
    POSTGRES_WRITE_BATCHES,
    options,
    async () => {
      await prisma.$disconnect();
      await Promise.all([pool.end(), bulkPool.end()]);
    },
    {
      importPlants: (lines, importOptions) => importPlantsPostgres(bulkPool, lines, importOptions),
      exportPlants: (exportOptions) => exportPlantsPostgres(bulkPool, exportOptions),
    },
  );
}

async function openPGlite(options: DatabaseOptions): Promise<Database> {
  const dataDir = resolve(options.dataDir);
  const release = await lockDataDir(dataDir, {
    ...(options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs }),
    ...(options.onLockLost === undefined ? {} : { onLost: options.onLockLost }),
  });
  let pglite: PGlite | undefined;
  try {
    pglite = await createPGliteKeepingText(join(dataDir, 'pgdata'));
    const applied = await migrateOrCheck({ kind: 'pglite', client: pglite }, options);
    const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
    const client = pglite;
    return await createDatabase(
      'pglite',
      prisma,
      client,
      applied,
      PGLITE_WRITE_BATCHES,
      options,
      async () => {
        await prisma.$disconnect();
        await client.close();
        await release();
      },
      {
        importPlants: (lines, importOptions) => importPlantsPGlite(client, lines, importOptions),
        exportPlants: (exportOptions) => exportPlantsPGlite(client, exportOptions),
      },
    );
  } catch (error) {
    await pglite?.close().catch(() => {});
    await release();
    throw error;
  }
}

/** Applies pending migrations (the names applied), or with `migrate: false` checks there are none. */
async function migrateOrCheck(target: MigrationTarget, options: DatabaseOptions): Promise<readonly string[]> {
  if (options.migrate !== false) return (await applyMigrations(target)).applied;
  const pending = await pendingMigrations(target);
  if (pending.length > 0) throw new MigrationsPendingError(pending);
  return [];
}

/**
 * Applies the pending migrations to the configured database and closes it again: the `migrate`
 * step of a deployment. Safe to run from many processes at once on PostgreSQL (they take
 * turns on Prisma's advisory lock); the embedded folder is locked for its duration.
 */
export async function migrateDatabase(
  options: Pick<DatabaseOptions, 'url' | 'dataDir' | 'lockWaitMs'>,
): Promise<readonly string[]> {
  if (options.url) return (await applyMigrations({ kind: 'postgres', connectionString: options.url })).applied;
  const dataDir = resolve(options.dataDir);
  const release = await lockDataDir(dataDir, options.lockWaitMs === undefined ? {} : { waitMs: options.lockWaitMs });
  try {
    const pglite = await PGlite.create(join(dataDir, 'pgdata'));
    try {
      return (await applyMigrations({ kind: 'pglite', client: pglite })).applied;
    } finally {
      await pglite.close();
    }
  } finally {
    await release();
  }
}

/** Whether the session could write (false on a primary, true on a standby): ping's question. */
const READ_ONLY_SQL = "SELECT current_setting('transaction_read_only') = 'on' AS read_only";
/** PostgreSQL connections for imports and exports by default (see DatabaseOptions.bulkConnections). */
const BULK_CONNECTIONS = 4;
/** The bulk connections' application_name: how pg_stat_activity tells them. */
export const BULK_APPLICATION_NAME = 'plant-store-bulk';
/** The longest a statement may run on PostgreSQL before the server cancels it (a 503). */
const STATEMENT_TIMEOUT_MS = 900;
/** PGlite runs one statement at a time: more batches in flight would only queue. */
const PGLITE_WRITE_BATCHES = 1;
/**
 * Write statements in flight at once on PostgreSQL. One: creates gather behind it into the
 * next batch, and each statement costs Prisma about 1.5 ms of CPU whatever its size, so fewer,
 * larger batches win (measured at concurrency 16 / 64: one in flight 2,090 / 3,750 creates/s,
 * two 1,400 / 3,550, eight 1,060 / 2,140).
 */
const POSTGRES_WRITE_BATCHES = 1;
/** Most creates one group-commit statement writes. */
const MAX_WRITE_BATCH = 256;
/** Most reads (by id, or pages) one statement answers. */
const MAX_READ_BATCH = 256;
/** Most creates waiting for a statement; beyond, 503 at once (the process is overloaded). */
const MAX_QUEUED_CREATES = 4_096;
/** A create that waited this long for its statement to start answers 503 (well within 2 s). */
const MAX_CREATE_WAIT_MS = 1_000;
/** Most webhook attempts one statement records. */
const MAX_ATTEMPT_BATCH = 256;
/**
 * How long a recording of webhook attempts waits for more to join it (see createAttemptRecorder):
 * with one delivery in flight, a statement per delivery or two cost the creates beside them about
 * a fifth of their rate. What waits on it: the delivery's lease, the dispatcher's bound on attempts
 * not yet recorded, and its drain at shutdown.
 */
const ATTEMPT_LINGER_MS = 20;
/** A subscription whose every attempt failed for 5 days is disabled, by default (Svix's rule). */
const DEFAULT_DISABLE_AFTER_MS = 5 * 86_400_000;
/** How often the active tokens are loaded again by default: a revocation elsewhere takes effect within this. */
const TOKEN_REFRESH_MS = 5_000;
/** How long a "no such token" answer is reused: a token issued elsewhere works here within this, at worst. */
const TOKEN_UNKNOWN_TTL_MS = 5_000;
/** "No such token" answers remembered, apart from the real tokens (a bogus-token flood stays in here). */
const TOKEN_MAX_UNKNOWN_ENTRIES = 10_000;
/** How often `last_used_at` stamps are written by default: the precision of a token's lastUsedAt. */
const TOKEN_USE_FLUSH_MS = 60_000;
/** Full pages of the event feed kept in memory by default (see createFeedPageCache). */
export const DEFAULT_FEED_PAGE_CACHE_BYTES = 32 * 1024 * 1024;
/**
 * How old the feed's horizon a cached page is checked against may be: a cursor another replica's
 * retention has just passed is answered its (complete) page for up to this long, then 410.
 */
const FEED_HORIZON_MAX_AGE_MS = 1_000;

/**
 * The repository over open connections, once every active token is loaded (see
 * createTokenDirectory); the connections are closed again when that fails.
 */
async function createDatabase(
  engine: DatabaseEngine,
  prisma: PrismaClient,
  sql: SqlRunner,
  appliedMigrations: readonly string[],
  maxConcurrentWriteBatches: number,
  options: DatabaseOptions,
  closeConnections: () => Promise<void>,
  bulk: Pick<Database, 'importPlants' | 'exportPlants'>,
): Promise<Database> {
  const { observe, trace, onWebhookEvents, tokenUseFlushMs, onTokenUseFlushError } = options;
  let closing: Promise<void> | undefined;
  const writer = createPlantWriter(sql, {
    maxBatchSize: MAX_WRITE_BATCH,
    maxConcurrentBatches: maxConcurrentWriteBatches,
    maxQueued: MAX_QUEUED_CREATES,
    maxWaitMs: MAX_CREATE_WAIT_MS,
    ...(onWebhookEvents === undefined ? {} : { onEvents: onWebhookEvents }),
  });
  const reader = createPlantReader(sql, { maxBatchSize: MAX_READ_BATCH });
  const updater = createPlantUpdater(sql, {
    maxBatchSize: MAX_WRITE_BATCH,
    maxConcurrentBatches: maxConcurrentWriteBatches,
    maxQueued: MAX_QUEUED_CREATES,
    maxWaitMs: MAX_CREATE_WAIT_MS,
    ...(onWebhookEvents === undefined ? {} : { onEvents: onWebhookEvents }),
  });
  const attempts = createAttemptRecorder(sql, {
    maxBatchSize: MAX_ATTEMPT_BATCH,
    lingerMs: ATTEMPT_LINGER_MS,
    disableFailing: { afterMs: options.webhookDisableAfterMs ?? DEFAULT_DISABLE_AFTER_MS },
  });
  // Timed and traced inside the directory: the metric and the spans show the database's lookups,
  // not the directory's answers.
  const lookUpToken = observed(DATABASE_OPERATIONS.authenticateToken, { observe, trace }, (token: string) =>
    authenticateToken(sql, token),
  );
  // Timed and traced inside the cache: the metric and the spans show the database's reads, not the cache's answers.
  const feed = createFeedPageCache(sql, {
    maxBytes: options.feedPageCacheBytes ?? DEFAULT_FEED_PAGE_CACHE_BYTES,
    horizonMaxAgeMs: FEED_HORIZON_MAX_AGE_MS,
    readPage: observed(DATABASE_OPERATIONS.listEvents, { observe, trace }, (query: ListEventsQuery) =>
      listEvents(sql, query),
    ),
    observeHorizonRead: (read) => observed(DATABASE_OPERATIONS.readFeedHorizon, { observe, trace }, read)(),
  });
  const tokens = createTokenDirectory(
    { listActive: () => listActiveTokens(sql), lookUp: lookUpToken },
    {
      refreshMs: options.tokenRefreshMs ?? TOKEN_REFRESH_MS,
      unknownTtlMs: TOKEN_UNKNOWN_TTL_MS,
      maxUnknownEntries: TOKEN_MAX_UNKNOWN_ENTRIES,
      ...(options.onTokenRefreshError === undefined ? {} : { onRefreshError: options.onTokenRefreshError }),
    },
  );
  try {
    await tokens.start();
  } catch (error) {
    await closeConnections().catch(() => {});
    throw translateError(error);
  }
  const tokenUse = createTokenUseRecorder(sql, {
    flushIntervalMs: tokenUseFlushMs ?? TOKEN_USE_FLUSH_MS,
    ...(onTokenUseFlushError === undefined ? {} : { onFlushError: onTokenUseFlushError }),
  });
  return {
    engine,
    appliedMigrations,
    createPlant: (plant, context) =>
      // A copy only when there is something to add: a plain create (the bench's) allocates nothing more.
      writer.create(context === undefined ? plant : { ...plant, traceParent: context.traceParent, team: context.team }),
    findPlant: (id) => reader.find(id),
    updatePlant: (update) => updater.update(update),
    listPlants: (query) => reader.list(query),
    async importPlants(lines, importOptions) {
      const result = await bulk.importPlants(lines, importOptions);
      if (result.events > 0) onWebhookEvents?.();
      return result;
    },
    exportPlants: (exportOptions) => bulk.exportPlants(exportOptions),
    async deletePlant(id, actor, options) {
      const result = await deletePlant(sql, id, actor, options);
      if (result.outcome === 'deleted' && result.events > 0) onWebhookEvents?.();
      return result;
    },
    listEvents: (query) => feed.listEvents(query),
    currentEventCursor: () => currentEventCursor(sql),
    async issueToken(issue) {
      const issued = await issueToken(prisma, issue);
      // Known here at once (a lookup of it before it existed may be remembered as unknown).
      tokens.issued(issued.token, authenticatedTokenOf(issued.record));
      return issued;
    },
    authenticateToken: (token) => tokens.authenticate(token),
    knowsToken: (token) => tokens.knows(token),
    recordTokenUse: (id) => tokenUse.record(id),
    flushTokenUse: () => tokenUse.flush(),
    listTokens: (list) => listTokens(prisma, list),
    async revokeToken(name, revoke) {
      const record = await revokeToken(prisma, name, revoke);
      // Only this token: every other token, and a name that named none (a 404), evict nothing.
      tokens.revoked(record.id);
      return record;
    },
    countTokens: () => countTokens(prisma),
    createWebhook: (input) => createWebhook(prisma, input),
    listWebhooks: (scope) => listWebhooks(prisma, scope),
    deleteWebhook: (id, remove) => deleteWebhook(prisma, id, remove),
    listDeliveries: (webhookId, query, scope) => listDeliveries(prisma, webhookId, query, scope),
    resendDelivery: (webhookId, deliveryId, resend) => resendDelivery(prisma, webhookId, deliveryId, resend),
    updateWebhook: (id, patch, scope) => updateWebhook(prisma, id, patch, scope),
    rotateWebhookSecret: (id, grace, scope) => rotateWebhookSecret(prisma, id, grace, scope),
    sendWebhookTest: (id, scope) => sendWebhookTest(prisma, id, scope),
    resendDeliveries: (webhookId, input, resend) => resendDeliveries(prisma, webhookId, input, resend),
    listAuditEvents: (query) => listAuditEvents(sql, query),
    deleteOldAuditEvents: (retention) => deleteOldAuditEvents(sql, retention),
    fanOutEvents: (options) => fanOutEvents(sql, options),
    webhookReceivers: () => webhookReceivers(sql),
    claimDeliveries: (options) => claimDeliveries(sql, options),
    recordAttempt: (claim, outcome) => attempts.record(claim, outcome),
    releaseClaim: (claim) => releaseClaim(sql, claim),
    async deleteOldWebhookData(retention) {
      const result = await deleteOldWebhookData(sql, retention);
      if (result.events > 0) feed.horizonMoved();
      return result;
    },
    async ping() {
      let readOnly: boolean | undefined;
      try {
        const { rows } = await sql.query<{ read_only: boolean }>(READ_ONLY_SQL, []);
        readOnly = rows[0]?.read_only;
      } catch (error) {
        throw translateError(error);
      }
      // Connected, but to a standby (or a read-only session): no write would succeed.
      if (readOnly !== false) throw new DatabaseUnavailableError({ cause: new Error('the database is read-only') });
    },
    close() {
      // Creates already queued or running are answered, and the last token-use stamps written,
      // before the connections go.
      tokens.close();
      closing ??= Promise.all([writer.close(), updater.close()])
        .then(() => tokenUse.close())
        .then(closeConnections);
      return closing;
    },
  };
}

/**
 * The same database, each data call timed for `observe` and bracketed by `trace` (a token lookup
 * and a page of the feed are timed inside, where they reach the database: see createDatabase).
 */
function observeCalls(db: Database, instruments: CallInstruments): Database {
  if (!instruments.observe && !instruments.trace) return db;
  const ops = DATABASE_OPERATIONS;
  return {
    ...db,
    createPlant: observed(ops.createPlant, instruments, db.createPlant),
    findPlant: observed(ops.findPlant, instruments, db.findPlant),
    updatePlant: observed(ops.updatePlant, instruments, db.updatePlant),
    currentEventCursor: observed(ops.currentEventCursor, instruments, db.currentEventCursor),
    listPlants: observed(ops.listPlants, instruments, db.listPlants),
    deletePlant: observed(ops.deletePlant, instruments, db.deletePlant),
    createWebhook: observed(ops.createWebhook, instruments, db.createWebhook),
    listWebhooks: observed(ops.listWebhooks, instruments, db.listWebhooks),
    deleteWebhook: observed(ops.deleteWebhook, instruments, db.deleteWebhook),
    listDeliveries: observed(ops.listDeliveries, instruments, db.listDeliveries),
    resendDelivery: observed(ops.resendDelivery, instruments, db.resendDelivery),
    updateWebhook: observed(ops.updateWebhook, instruments, db.updateWebhook),
    rotateWebhookSecret: observed(ops.rotateWebhookSecret, instruments, db.rotateWebhookSecret),
    sendWebhookTest: observed(ops.sendWebhookTest, instruments, db.sendWebhookTest),
    resendDeliveries: observed(ops.resendDeliveries, instruments, db.resendDeliveries),
    listAuditEvents: observed(ops.listAuditEvents, instruments, db.listAuditEvents),
    deleteOldAuditEvents: observed(ops.deleteOldAuditEvents, instruments, db.deleteOldAuditEvents),
    fanOutEvents: observed(ops.fanOutEvents, instruments, db.fanOutEvents),
    webhookReceivers: observed(ops.webhookReceivers, instruments, db.webhookReceivers),
    claimDeliveries: observed(ops.claimDeliveries, instruments, db.claimDeliveries),
    recordAttempt: observed(ops.recordAttempt, instruments, db.recordAttempt),
    releaseClaim: observed(ops.releaseClaim, instruments, db.releaseClaim),
    deleteOldWebhookData: observed(ops.deleteOldWebhookData, instruments, db.deleteOldWebhookData),
    ping: observed(ops.ping, instruments, db.ping),
  };
}
