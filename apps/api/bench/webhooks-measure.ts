import { benchPlant, plantJson } from './bench-plants.js';
import { type CpuShare, startCpuWindow } from './cpu-usage.js';
import type { Engine } from './options.js';
import { createPlant, type ServiceApi, subscribe, unsubscribe, updatePlant } from './webhooks-client.js';
import { type BenchReceiver, startReceiver } from './webhooks-receiver.js';

export interface LatencySettings {
  /** Creates per second, each waited for: well below what the service can take. */
  readonly ratePerSecond: number;
  readonly seconds: number;
  /** Creates sent first and not measured: connections, pools and JIT warm up. */
  readonly warmupCreates: number;
  /** How long to wait for the last deliveries. */
  readonly deliveryTimeoutMs: number;
}

/** Delivery latency: from a create's 200 to its POST at the receiver, one event at a time. */
export interface LatencyResult {
  readonly engine: Engine;
  /** Measured creates (each answered 200). */
  readonly events: number;
  /** The creates' rate as sent: lower than asked when creates took longer than the interval. */
  readonly sentPerSecond: number;
  /** Over the events that arrived. Negative: the POST arrived before the create's 200. */
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly minMs: number;
  /** Events whose POST arrived before the create's 200 (the nudge comes after commit, before the answer). */
  readonly beforeAnswer: number;
  /** Events not delivered within the timeout. */
  readonly missing: number;
  readonly duplicates: number;
}

export interface BacklogSettings {
  readonly creates: number;
  /** Creates in flight at once. */
  readonly concurrency: number;
  /** How long to wait, after the last create, for every event to reach every receiver. */
  readonly deliveryTimeoutMs: number;
}

/** The dispatcher's sustained rate: a burst of creates, fanned out to `receivers` receivers. */
export interface BacklogResult {
  readonly engine: Engine;
  readonly receivers: number;
  /** Creates answered 200: each one event, sent to every receiver. */
  readonly creates: number;
  /** Creates answered otherwise, or not at all: not expected at the receivers. */
  readonly failedCreates: number;
  readonly burstMs: number;
  readonly createsPerSecond: number;
  /** POSTs received by all receivers, repeats included. */
  readonly deliveries: number;
  /** Deliveries from the first to the last, over that time. */
  readonly deliveryMs: number;
  readonly deliveriesPerSecond: number;
  /** From the last create's 200 to the last delivery: the backlog left when the burst ended. */
  readonly drainAfterLastCreateMs: number;
  /** (receiver, plant) pairs never delivered within the timeout. */
  readonly missing: number;
  readonly duplicates: number;
  readonly unreadable: number;
  /**
   * From the burst's start to the last delivery: the service, the bench process (callers and
   * receivers: the load generator) and the machine, PostgreSQL included.
   */
  readonly cpu: CpuShare;
}

/**
 * One subscription; creates sent on a fixed schedule (`ratePerSecond`), each waited for before
 * the next, so each event is dispatched alone: what this shows is the path of one event (commit,
 * nudge, claim, POST), not a queue.
 */
export async function measureLatency(
  api: ServiceApi,
  engine: Engine,
  nextId: () => bigint,
  settings: LatencySettings,
): Promise<LatencyResult> {
  return withReceivers(api, 1, async ([receiver]) => {
    if (receiver === undefined) throw new Error('no receiver');
    const warmup = await sendSteadily(api, nextId, settings.warmupCreates, settings.ratePerSecond);
    await receiver.waitForAll([...warmup.answers.keys()], settings.deliveryTimeoutMs);
    const before = receiver.counts().duplicates;

    const count = Math.round(settings.ratePerSecond * settings.seconds);
    const sent = await sendSteadily(api, nextId, count, settings.ratePerSecond);
    const ids = [...sent.answers.keys()];
    const missing = await receiver.waitForAll(ids, settings.deliveryTimeoutMs);
    const latencies = ids.flatMap((id) => {
      const arrivedAt = receiver.firstArrivals.get(id);
      const answeredAt = sent.answers.get(id);
      return arrivedAt === undefined || answeredAt === undefined ? [] : [arrivedAt - answeredAt];
    });
    const sorted = latencies.sort((a, b) => a - b);
    return {
      engine,
      events: ids.length,
      sentPerSecond: ids.length / (sent.elapsedMs / 1000),
      p50Ms: percentile(sorted, 50),
      p90Ms: percentile(sorted, 90),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1) ?? Number.NaN,
      minMs: sorted[0] ?? Number.NaN,
      beforeAnswer: sorted.filter((ms) => ms < 0).length,
      missing,
      duplicates: receiver.counts().duplicates - before,
    };
  });
}

/**
 * `receivers` subscriptions; `creates` plants posted from `concurrency` callers as fast as the
 * service answers, while the dispatcher already delivers. Deliveries therefore overlap the
 * burst; the drain after the last create is the part of the backlog the burst left behind.
 */
export async function measureBacklog(
  api: ServiceApi,
  engine: Engine,
  nextId: () => bigint,
  receivers: number,
  settings: BacklogSettings,
): Promise<BacklogResult> {
  return withReceivers(api, receivers, async (started) => {
    const cpu = await startCpuWindow({ serverPid: api.pid, generatorPid: undefined });
    const burst = await sendBurst(api, nextId, settings.creates, settings.concurrency);
    const ids = [...burst.answers.keys()];
    // One deadline for all: the receivers are delivered to at the same time, not one after another.
    const deadline = Date.now() + settings.deliveryTimeoutMs;
    let missing = 0;
    for (const receiver of started) missing += await receiver.waitForAll(ids, Math.max(0, deadline - Date.now()));

    const cpuShare = await cpu.stop();
    const counts = started.map((receiver) => receiver.counts());
    const sum = (pick: (count: (typeof counts)[number]) => number) =>
      counts.reduce((total, count) => total + pick(count), 0);
    const firstAt = Math.min(...counts.map((count) => count.firstAt ?? Number.NaN));
    const lastAt = Math.max(...counts.map((count) => count.lastAt ?? Number.NaN));
    const deliveries = sum((count) => count.posts);
    return {
      engine,
      receivers,
      creates: ids.length,
      failedCreates: burst.failed,
      burstMs: burst.elapsedMs,
      createsPerSecond: ids.length / (burst.elapsedMs / 1000),
      deliveries,
      deliveryMs: lastAt - firstAt,
      deliveriesPerSecond: deliveries / ((lastAt - firstAt) / 1000),
      drainAfterLastCreateMs: lastAt - burst.lastAnsweredAt,
      missing,
      duplicates: sum((count) => count.duplicates),
      unreadable: sum((count) => count.unreadable),
      cpu: cpuShare,
    };
  });
}

export type FanOutDispatcher = 'this process' | 'elsewhere';

/** What many subscriptions cost the creates: the same burst with none and with `subscriptions`. */
export interface FanOutResult {
  readonly engine: Engine;
  /**
   * Where deliveries are sent from: `this process` (the service measured fans out and delivers
   * meanwhile, on the same CPUs), or `elsewhere` (it runs with WEBHOOKS_DISPATCH=false, as the
   * serving replicas of a deployment with dispatchers of their own do; nothing delivers during
   * the burst): the create path alone.
   */
  readonly dispatcher: FanOutDispatcher;
  /**
   * What the burst sends: creates (subscriptions of the default type, plant.created), or updates
   * of plants created before it (`PATCH /plants/{id}`, subscriptions taking every type: each update
   * is a plant.updated event for each of them, as an envelope).
   */
  readonly change: FanOutChange;
  readonly subscriptions: number;
  /** Changes answered 200 (creates or updates, as `change` says). */
  readonly creates: number;
  readonly failedCreates: number;
  readonly createsPerSecond: number;
  /** Over the burst: the service, the bench process and the machine. */
  readonly cpu: CpuShare;
}

/**
 * `subscriptions` subscriptions (0: none), all to one receiver that answers at once; a burst of
 * `creates` from `concurrency` callers, as in measureBacklog, timed to its last answer. With
 * `dispatcher` 'this process', the dispatcher runs meanwhile in the same process, fanning out
 * and delivering: what a create costs with them, everything included. Deliveries are not waited
 * for (100 subscriptions make 100 per create).
 */
export type FanOutChange = 'creates' | 'updates';

export async function measureFanOut(
  api: ServiceApi,
  engine: Engine,
  dispatcher: FanOutDispatcher,
  nextId: () => bigint,
  subscriptions: number,
  settings: BacklogSettings,
  change: FanOutChange = 'creates',
): Promise<FanOutResult> {
  const receiver = await startReceiver();
  const webhookIds: string[] = [];
  try {
    // Updates change plants created first, before any subscription (not measured).
    const updated =
      change === 'updates'
        ? [...(await sendBurst(api, nextId, settings.creates, settings.concurrency)).answers.keys()]
        : [];
    const eventTypes = change === 'updates' ? ['plant.created', 'plant.updated', 'plant.deleted'] : undefined;
    for (let index = 0; index < subscriptions; index += 1) {
      webhookIds.push(await subscribe(api, `${receiver.url}?subscription=${index}`, eventTypes));
    }
    const cpu = await startCpuWindow({ serverPid: api.pid, generatorPid: undefined });
    const burst =
      change === 'updates'
        ? await sendUpdateBurst(api, updated, settings.concurrency)
        : await sendBurst(api, nextId, settings.creates, settings.concurrency);
    const cpuShare = await cpu.stop();
    return {
      engine,
      dispatcher,
      change,
      subscriptions,
      creates: burst.answers.size,
      failedCreates: burst.failed,
      createsPerSecond: burst.answers.size / (burst.elapsedMs / 1000),
      cpu: cpuShare,
    };
  } finally {
    for (const webhookId of webhookIds) await unsubscribe(api, webhookId).catch(() => {});
    await receiver.close();
  }
}

/** Starts and subscribes `count` receivers for `work`; then unsubscribes and stops them. */
async function withReceivers<T>(
  api: ServiceApi,
  count: number,
  work: (receivers: readonly BenchReceiver[]) => Promise<T>,
): Promise<T> {
  const receivers: BenchReceiver[] = [];
  const webhookIds: string[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const receiver = await startReceiver();
      receivers.push(receiver);
      webhookIds.push(await subscribe(api, receiver.url));
    }
    return await work(receivers);
  } finally {
    // Unsubscribed first: the dispatcher must not be left retrying a closed port in the next stage.
    for (const webhookId of webhookIds) await unsubscribe(api, webhookId).catch(() => {});
    for (const receiver of receivers) await receiver.close();
  }
}

/** Plant id -> performance.now() of its 200. */
interface SentCreates {
  readonly answers: ReadonlyMap<bigint, number>;
  readonly elapsedMs: number;
}

/** `count` creates, the i-th started at i/rate seconds (or when the one before is answered, if later). */
async function sendSteadily(
  api: ServiceApi,
  nextId: () => bigint,
  count: number,
  ratePerSecond: number,
): Promise<SentCreates> {
  const answers = new Map<bigint, number>();
  const startedAt = performance.now();
  for (let index = 0; index < count; index += 1) {
    const wait = startedAt + (index * 1000) / ratePerSecond - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = nextId();
    const answer = await createPlant(api, plantJson(benchPlant(id)));
    if (answer.status !== 200) throw new Error(`POST /plants answered ${answer.status}`);
    answers.set(id, answer.answeredAt);
  }
  return { answers, elapsedMs: performance.now() - startedAt };
}

interface Burst extends SentCreates {
  readonly failed: number;
  readonly lastAnsweredAt: number;
}

/** `count` creates from `concurrency` callers, each sending its next create when answered. */
async function sendBurst(api: ServiceApi, nextId: () => bigint, count: number, concurrency: number): Promise<Burst> {
  const bodies = Array.from({ length: count }, () => {
    const id = nextId();
    return { id, body: plantJson(benchPlant(id)) };
  });
  const answers = new Map<bigint, number>();
  let failed = 0;
  let lastAnsweredAt = Number.NaN;
  let next = 0;
  const caller = async () => {
    for (let plant = bodies[next++]; plant !== undefined; plant = bodies[next++]) {
      try {
        const answer = await createPlant(api, plant.body);
        lastAnsweredAt = answer.answeredAt;
        if (answer.status === 200) answers.set(plant.id, answer.answeredAt);
        else failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: concurrency }, caller));
  return { answers, failed, lastAnsweredAt, elapsedMs: lastAnsweredAt - startedAt };
}

/** One update of each plant (a new name each time), from `concurrency` callers, each sending its next when answered. */
async function sendUpdateBurst(api: ServiceApi, ids: readonly bigint[], concurrency: number): Promise<Burst> {
  const answers = new Map<bigint, number>();
  let failed = 0;
  let lastAnsweredAt = Number.NaN;
  let next = 0;
  const caller = async () => {
    for (let id = ids[next++]; id !== undefined; id = ids[next++]) {
      try {
        const answer = await updatePlant(api, id, `{"name":"renamed ${id}"}`);
        lastAnsweredAt = answer.answeredAt;
        if (answer.status === 200) answers.set(id, answer.answeredAt);
        else failed += 1;
      } catch {
        failed += 1;
      }
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: concurrency }, caller));
  return { answers, failed, lastAnsweredAt, elapsedMs: lastAnsweredAt - startedAt };
}

/** Nearest rank: the smallest value with at least `p` percent of the values at or below it. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
