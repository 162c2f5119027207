/**
 * The breaking-change gate for the HTTP contract. Three OpenAPI documents take part:
 * - served: what `GET /openapi.json` answers with default settings;
 * - committed: `apps/api/openapi.json`, which must be the served one byte for byte (regenerate it
 *   with `pnpm openapi:write`);
 * - released: `apps/api/openapi.released.json`, the contract as of the last release of the
 *   contract packages (`pnpm version-packages` records it).
 * A difference is classified with api-smart-diff (breaking, non-breaking, deprecated, annotation,
 * unclassified). A breaking change since the last release needs a pending major changeset for a
 * contract package: they are one fixed group, so a major for either bumps both; or a reviewed
 * entry in `apps/api/openapi.reviewed.json` saying why the change breaks no client (the tool
 * classifies by form: a `pattern` that only describes what the service already refused is
 * "breaking" to it). Entries name the change by the tool's sentence and must all still occur;
 * a release empties the file.
 */
import { readChangesets } from '@changesets/read';
import { apiCompare } from 'api-smart-diff';
import { parse, stringify } from 'lossless-json';

/** The packages that carry the HTTP contract to other teams, released together. */
export const CONTRACT_PACKAGES = ['@plant-store/schema', '@plant-store/client'] as const;

export type ChangeType = 'breaking' | 'non-breaking' | 'deprecated' | 'annotation' | 'unclassified' | 'reviewed';

/** A change the tool calls breaking (or leaves unclassified) that a person reviewed as breaking no client. */
export interface ReviewedChange {
  /** The tool's sentence for the change, exactly as the gate prints it. */
  readonly change: string;
  /** Why no client that worked before fails now. */
  readonly reason: string;
}

export interface ContractChange {
  readonly type: ChangeType;
  /** A sentence from the tool (e.g. "[Removed] operation DELETE /plants/{id}"), else action and path. */
  readonly description: string;
}

export type Verdict = 'unchanged' | 'breaking' | 'non-breaking';

export interface Comparison {
  readonly verdict: Verdict;
  readonly changes: readonly ContractChange[];
}

/**
 * The document in its committed form: the served JSON, keys in the served order, two-space
 * indentation, a final newline; numbers are written exactly as served (int64 bounds included).
 */
export function formatDocument(text: string): string {
  return `${stringify(parse(text), null, 2)}\n`;
}

/**
 * The changes from `before` to `after`, classified. Unclassified changes count as breaking: the
 * tool has no rule for them, so a person decides (and says so with a major changeset, or not).
 */
export function compareDocuments(before: string, after: string): Comparison {
  if (formatDocument(before) === formatDocument(after)) return { verdict: 'unchanged', changes: [] };
  // The classifier reads plain JSON: numbers past 2^53 round alike on both sides. A difference
  // only there still shows, below, as an unclassified change.
  const { diffs } = apiCompare(JSON.parse(before), JSON.parse(after));
  const changes: ContractChange[] = [];
  const seen = new Set<string>();
  const described = new Set(diffs.filter((diff) => diff.description).map((diff) => diff.type));
  for (const diff of diffs) {
    // A change to a component is reported again, with a sentence, where an operation uses it:
    // the component's bare path is kept only when no sentence of its type was given.
    if (!diff.description && diff.path[0] === 'components' && described.has(diff.type)) continue;
    const description = diff.description || `${diff.action} ${diff.path.join('.')}`;
    const key = `${diff.type} ${description}`;
    if (seen.has(key)) continue;
    seen.add(key);
    changes.push({ type: classifyExamples(diff.type as ChangeType, diff.path), description });
  }
  if (changes.length === 0) {
    changes.push({ type: 'unclassified', description: 'the documents differ where the tool sees no change' });
  }
  const breaking = changes.some((change) => change.type === 'breaking' || change.type === 'unclassified');
  return { verdict: breaking ? 'breaking' : 'non-breaking', changes };
}

/**
 * Examples illustrate a schema and constrain nothing a client or server does (OpenAPI 3.1, 4.19 and
 * 4.14.1): a change the tool leaves unclassified inside an `example` or `examples` is an annotation.
 */
function classifyExamples(type: ChangeType, path: readonly PropertyKey[]): ChangeType {
  return type === 'unclassified' && path.some((key) => key === 'example' || key === 'examples') ? 'annotation' : type;
}

/** The pending changesets (`.changeset/*.md` under `root`) that release a contract package as major. */
export async function majorContractChangesets(root: string): Promise<string[]> {
  const changesets = await readChangesets(root);
  return changesets
    .filter((changeset) =>
      changeset.releases.some(
        (release) => release.type === 'major' && (CONTRACT_PACKAGES as readonly string[]).includes(release.name),
      ),
    )
    .map((changeset) => `.changeset/${changeset.id}.md`);
}

export interface GateInput {
  readonly served: string;
  /** Reviewed changes since the last release (apps/api/openapi.reviewed.json); default none. */
  readonly reviewed?: readonly ReviewedChange[];
  readonly committed: string;
  readonly released: string;
  /** The folder that holds `.changeset/`. */
  readonly root: string;
}

export interface GateResult {
  readonly exitCode: 0 | 1;
  readonly stale: Comparison;
  readonly sinceRelease: Comparison;
  readonly majorChangesets: readonly string[];
  readonly report: string;
}

/** The comparison with the reviewed breaking or unclassified changes retyped as `reviewed`. */
function applyReviews(
  comparison: Comparison,
  reviews: readonly ReviewedChange[],
): { comparison: Comparison; unmatched: ReviewedChange[] } {
  const used = new Set<ReviewedChange>();
  const changes = comparison.changes.map((change) => {
    if (change.type !== 'breaking' && change.type !== 'unclassified') return change;
    const review = reviews.find((candidate) => candidate.change === change.description);
    if (review === undefined) return change;
    used.add(review);
    return { ...change, type: 'reviewed' as const };
  });
  const unmatched = reviews.filter((review) => !used.has(review));
  if (comparison.verdict === 'unchanged') return { comparison, unmatched };
  const breaking = changes.some((change) => change.type === 'breaking' || change.type === 'unclassified');
  return { comparison: { verdict: breaking ? 'breaking' : 'non-breaking', changes }, unmatched };
}

function describe(comparison: Comparison): string[] {
  const counts = new Map<ChangeType, number>();
  for (const change of comparison.changes) counts.set(change.type, (counts.get(change.type) ?? 0) + 1);
  const summary = [...counts].map(([type, count]) => `${count} ${type}`).join(', ');
  return [
    `${comparison.verdict.toUpperCase()} (${summary})`,
    ...comparison.changes.map((change) => `  ${change.type.padEnd(12)} ${change.description}`),
  ];
}

/** Runs both checks; exit code 1 when the committed document is stale or a breaking change is undeclared. */
export async function runContractGate(input: GateInput): Promise<GateResult> {
  const lines: string[] = [];
  let exitCode: 0 | 1 = 0;

  const stale = compareDocuments(input.committed, input.served);
  if (formatDocument(input.served) === input.committed) {
    lines.push('served GET /openapi.json = apps/api/openapi.json: up to date');
  } else {
    exitCode = 1;
    lines.push('served GET /openapi.json differs from apps/api/openapi.json:', ...describe(stale));
    lines.push('FAIL: the committed document is stale: run `pnpm openapi:write` and commit apps/api/openapi.json');
  }

  const { comparison: sinceRelease, unmatched } = applyReviews(
    compareDocuments(input.released, input.served),
    input.reviewed ?? [],
  );
  for (const review of unmatched) {
    exitCode = 1;
    lines.push(
      `FAIL: apps/api/openapi.reviewed.json names a change that does not occur since the last release: ${review.change}`,
    );
  }
  const majorChangesets = sinceRelease.verdict === 'breaking' ? await majorContractChangesets(input.root) : [];
  if (sinceRelease.verdict === 'unchanged') {
    lines.push('since the last release (apps/api/openapi.released.json): no change');
  } else {
    lines.push('since the last release (apps/api/openapi.released.json):', ...describe(sinceRelease));
    for (const review of input.reviewed ?? []) {
      if (!unmatched.includes(review)) lines.push(`  reviewed: ${review.change}: ${review.reason}`);
    }
    if (sinceRelease.verdict === 'non-breaking') {
      lines.push('ok: no breaking change (a minor changeset for the new features is due)');
    } else if (majorChangesets.length > 0) {
      lines.push(`ok: breaking, and declared: a major release in ${majorChangesets.join(', ')}`);
    } else {
      exitCode = 1;
      lines.push(
        `FAIL: a breaking change needs a major changeset for ${CONTRACT_PACKAGES.join(' / ')}: ` +
          'run `pnpm changeset`, choose major, and say what changed for the teams that upgrade',
      );
    }
  }
  return { exitCode, stale, sinceRelease, majorChangesets, report: `${lines.join('\n')}\n` };
}
