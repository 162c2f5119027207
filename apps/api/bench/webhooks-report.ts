import { type Column, formatColumns, formatCpu, formatMs, formatRate } from './figures.js';
import type { MachineInfo } from './report.js';
import type { Failure } from './results-model.js';
import type {
  BacklogResult,
  BacklogSettings,
  FanOutResult,
  LatencyResult,
  LatencySettings,
} from './webhooks-measure.js';

export function formatLatencyTable(results: readonly LatencyResult[], settings: LatencySettings): string {
  const title =
    `Delivery latency, create's 200 -> receiver got the POST (1 subscription, ${settings.ratePerSecond} creates/s ` +
    `for ${settings.seconds} s, each waited for; negative: the POST came first)`;
  const columns: readonly Column[] = [
    ['engine', 'left'],
    ['events', 'right'],
    ['sent/s', 'right'],
    ['p50 ms', 'right'],
    ['p90 ms', 'right'],
    ['p99 ms', 'right'],
    ['max ms', 'right'],
    ['min ms', 'right'],
    ['before 200', 'right'],
    ['missing', 'right'],
    ['dup', 'right'],
  ];
  const rows = results.map((result) => [
    result.engine,
    String(result.events),
    formatRate(result.sentPerSecond),
    formatMs(result.p50Ms),
    formatMs(result.p90Ms),
    formatMs(result.p99Ms),
    formatMs(result.maxMs),
    formatMs(result.minMs),
    String(result.beforeAnswer),
    String(result.missing),
    String(result.duplicates),
  ]);
  return `${title}\n${formatColumns(columns, rows)}`;
}

export function formatBacklogTable(results: readonly BacklogResult[], settings: BacklogSettings): string {
  const title =
    `Backlog: ${formatRate(settings.creates)} creates from ${settings.concurrency} callers, every event to every ` +
    'receiver (deliveries/s: first to last delivery, all receivers together)';
  const columns: readonly Column[] = [
    ['engine', 'left'],
    ['receivers', 'right'],
    ['creates', 'right'],
    ['creates/s', 'right'],
    ['deliveries', 'right'],
    ['deliveries/s', 'right'],
    ['per receiver/s', 'right'],
    ['drain after last create s', 'right'],
    ['missing', 'right'],
    ['dup', 'right'],
    ['failed creates', 'right'],
    ['CPU% srv/gen/all', 'right'],
  ];
  const rows = results.map((result) => [
    result.engine,
    String(result.receivers),
    String(result.creates),
    formatRate(result.createsPerSecond),
    String(result.deliveries),
    formatRate(result.deliveriesPerSecond),
    formatRate(result.deliveriesPerSecond / result.receivers),
    (result.drainAfterLastCreateMs / 1000).toFixed(2),
    String(result.missing),
    String(result.duplicates),
    String(result.failedCreates),
    formatCpu(result.cpu),
  ]);
  return `${title}\n${formatColumns(columns, rows)}`;
}

export function formatFanOutTable(results: readonly FanOutResult[], settings: BacklogSettings): string {
  const title =
    `Creates and subscriptions: ${formatRate(settings.creates)} creates from ${settings.concurrency} callers, ` +
    'with N subscriptions (all to one receiver); dispatcher "this process": it fans out and delivers meanwhile, ' +
    'in the measured process; "elsewhere": the measured process runs with WEBHOOKS_DISPATCH=false and nothing ' +
    'delivers during the burst (a serving replica beside dispatching ones); change "updates": as many PATCHes of ' +
    'plants created before, the N subscriptions taking every event type (each update a plant.updated envelope to ' +
    'each) (ratio: changes/s against the run with none on the same engine, dispatcher and change)';
  const columns: readonly Column[] = [
    ['engine', 'left'],
    ['dispatcher', 'left'],
    ['change', 'left'],
    ['subscriptions', 'right'],
    ['changes', 'right'],
    ['changes/s', 'right'],
    ['ratio', 'right'],
    ['failed', 'right'],
    ['CPU% srv/gen/all', 'right'],
  ];
  const rows = results.map((result) => {
    const none = results.find(
      (other) =>
        other.engine === result.engine &&
        other.dispatcher === result.dispatcher &&
        other.change === result.change &&
        other.subscriptions === 0,
    );
    return [
      result.engine,
      result.dispatcher,
      result.change,
      String(result.subscriptions),
      String(result.creates),
      formatRate(result.createsPerSecond),
      none ? (result.createsPerSecond / none.createsPerSecond).toFixed(2) : '-',
      String(result.failedCreates),
      formatCpu(result.cpu),
    ];
  });
  return `${title}\n${formatColumns(columns, rows)}`;
}

export interface WebhooksJsonReport {
  readonly date: string;
  readonly machine: MachineInfo;
  readonly settings: Record<string, unknown>;
  readonly latency: readonly Record<string, unknown>[];
  readonly backlog: readonly Record<string, unknown>[];
  readonly fanOut: readonly Record<string, unknown>[];
  readonly failures: readonly Failure[];
}

export function toWebhooksJson(
  date: Date,
  machine: MachineInfo,
  settings: { readonly latency: LatencySettings; readonly backlog: BacklogSettings },
  serviceEnv: Readonly<Record<string, string>>,
  latency: readonly LatencyResult[],
  backlog: readonly BacklogResult[],
  fanOut: readonly FanOutResult[],
  failures: readonly Failure[],
): WebhooksJsonReport {
  return {
    date: date.toISOString(),
    machine,
    settings: {
      latency: settings.latency,
      backlog: settings.backlog,
      service: 'node dist/index.js, NODE_ENV=production, LOG_LEVEL=warn; webhook settings not listed are the defaults',
      serviceWebhookEnv: serviceEnv,
      receivers: 'node:http on 127.0.0.1 in the bench process, 204 as soon as the body has arrived',
      clock: 'performance.now() in the bench process, for both the 200 and the arrival',
      cpu: 'backlog only, from the burst to the last delivery, percent of one core: service, bench process (callers and receivers), whole machine',
    },
    latency: latency.map((result) => ({
      ...result,
      sentPerSecond: round(result.sentPerSecond, 1),
      p50Ms: round(result.p50Ms, 3),
      p90Ms: round(result.p90Ms, 3),
      p99Ms: round(result.p99Ms, 3),
      maxMs: round(result.maxMs, 3),
      minMs: round(result.minMs, 3),
    })),
    backlog: backlog.map((result) => ({
      ...result,
      burstMs: round(result.burstMs, 1),
      createsPerSecond: round(result.createsPerSecond, 1),
      deliveryMs: round(result.deliveryMs, 1),
      deliveriesPerSecond: round(result.deliveriesPerSecond, 1),
      perReceiverPerSecond: round(result.deliveriesPerSecond / result.receivers, 1),
      drainAfterLastCreateMs: round(result.drainAfterLastCreateMs, 1),
    })),
    fanOut: fanOut.map((result) => ({ ...result, createsPerSecond: round(result.createsPerSecond, 1) })),
    failures,
  };
}

function round(value: number, digits: number): number | null {
  if (!Number.isFinite(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
