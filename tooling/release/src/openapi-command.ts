/**
 * `pnpm openapi:write`: writes what the built service serves at `GET /openapi.json` (default
 * settings) to apps/api/openapi.json.
 * `pnpm openapi:check`: the gate (see contract-gate.ts); `--served FILE` takes the served
 * document from a file instead of starting the service, `--root DIR` another checkout's documents
 * and changesets (the gate's own test uses both).
 * `pnpm openapi:release` (part of `pnpm version-packages`): records apps/api/openapi.json as the
 * released contract, apps/api/openapi.released.json, and empties apps/api/openapi.reviewed.json
 * (its reviews were of changes since the previous release).
 *
 * The document is fetched from the running service, not built in this process: the gate then
 * holds for exactly what clients get (every route, middleware and serializer on the way), and it
 * does not change when the way the document is built does.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startBuiltService } from './built-service.js';
import { formatDocument, type ReviewedChange, runContractGate } from './contract-gate.js';

const WORKSPACE = fileURLToPath(new URL('../../..', import.meta.url));
const COMMITTED = 'apps/api/openapi.json';
const RELEASED = 'apps/api/openapi.released.json';
const REVIEWED = 'apps/api/openapi.reviewed.json';

interface ReviewedFile {
  readonly $comment?: string;
  readonly changes: readonly ReviewedChange[];
}

const REVIEWED_COMMENT =
  'Changes since the last release that the OpenAPI diff tool calls breaking but that break no client, each with the reason (see docs/packages.md#the-breaking-change-gate). Emptied by pnpm openapi:release.';

/** The reviewed changes; none when the file is absent. */
async function readReviewed(root: string): Promise<readonly ReviewedChange[]> {
  let text: string;
  try {
    text = await readFile(join(root, REVIEWED), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const file = JSON.parse(text) as ReviewedFile;
  if (!Array.isArray(file.changes) || !file.changes.every((entry) => isReview(entry))) {
    throw new Error(`${REVIEWED}: expected {"changes": [{"change": "...", "reason": "..."}]}`);
  }
  return file.changes;
}

function isReview(entry: unknown): entry is ReviewedChange {
  if (typeof entry !== 'object' || entry === null) return false;
  const { change, reason } = entry as Record<string, unknown>;
  return typeof change === 'string' && typeof reason === 'string' && reason.trim() !== '';
}

/** `GET /openapi.json` from the built service, started for this on a fresh embedded database. */
async function fetchServedDocument(): Promise<string> {
  const service = await startBuiltService();
  try {
    const response = await fetch(new URL('/openapi.json', service.url));
    if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
    return await response.text();
  } finally {
    await service.stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { served: { type: 'string' }, root: { type: 'string', default: WORKSPACE } },
  });
  const root = values.root;
  switch (positionals.join(' ')) {
    case 'write': {
      await writeFile(join(root, COMMITTED), formatDocument(await fetchServedDocument()));
      process.stdout.write('wrote apps/api/openapi.json from the served GET /openapi.json\n');
      return 0;
    }
    case 'release': {
      await copyFile(join(root, COMMITTED), join(root, RELEASED));
      const emptied: ReviewedFile = { $comment: REVIEWED_COMMENT, changes: [] };
      await writeFile(join(root, REVIEWED), `${JSON.stringify(emptied, null, 2)}\n`);
      process.stdout.write(
        'recorded apps/api/openapi.json as the released contract (apps/api/openapi.released.json)\n',
      );
      return 0;
    }
    case 'check': {
      const served = values.served ? await readFile(values.served, 'utf8') : await fetchServedDocument();
      const result = await runContractGate({
        served,
        committed: await readFile(join(root, COMMITTED), 'utf8'),
        released: await readFile(join(root, RELEASED), 'utf8'),
        reviewed: await readReviewed(root),
        root,
      });
      process.stdout.write(result.report);
      return result.exitCode;
    }
    default:
      process.stderr.write(
        'usage: openapi-command.ts write | check [--served FILE] [--root DIR] | release [--root DIR]\n',
      );
      return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
