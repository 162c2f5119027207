import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createPlantStoreClient, type PlantStoreClient } from '@plant-store/client';
import { stringifyJson } from '@plant-store/schema';
import { Agent, fetch as undiciFetch } from 'undici';
import { createProgress, type ProgressOutput } from './progress.js';
import { UsageError } from './token-command.js';

export const USAGE = `Usage:
  plant-store plants import FILE [--gzip]   send FILE (NDJSON, one plant a line) to POST /plants/import
  plant-store plants export FILE [--tag TAG] write every plant (or one tag's) from GET /plants/export to FILE
                                            (FILE - writes to standard output)

Both go through the service's HTTP API with a token, so its scopes, the audit log and the events apply:
  --url URL      the service (default PLANT_STORE_URL, else http://127.0.0.1:3000)
  --token TOKEN  a bearer token (default PLANT_STORE_TOKEN): plants:write to import, plants:read to export
An import is all or nothing: a bad line stops it (the message names the line) and nothing is stored;
sending the same file again after a failure is safe. On a terminal a progress bar shows rows, rate
and time left on standard error; otherwise only the summary line is printed.`;

/** Where the command reads its settings and writes what it says. */
export interface PlantsCommandEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The summary line (stdout). */
  out(line: string): void;
  /** Where the progress bar goes, when it is a terminal. */
  readonly progress: ProgressOutput;
  /** Standard output, for `export -`. */
  readonly stdout: NodeJS.WritableStream;
}

const DEFAULT_URL = 'http://127.0.0.1:3000';

/** `plant-store plants import|export FILE`: see USAGE. */
export async function runPlantsCommand(args: readonly string[], environment: PlantsCommandEnvironment): Promise<void> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      tag: { type: 'string' },
      gzip: { type: 'boolean' },
    },
  });
  const [action, file, ...extra] = positionals;
  if (file === undefined || extra.length > 0 || (action !== 'import' && action !== 'export')) {
    throw new UsageError('expected `plants import FILE` or `plants export FILE`');
  }
  const token = values.token ?? environment.env.PLANT_STORE_TOKEN;
  if (token === undefined || token === '') throw new UsageError('a token is required: --token or PLANT_STORE_TOKEN');
  const client = createPlantStoreClient({
    baseUrl: values.url ?? environment.env.PLANT_STORE_URL ?? DEFAULT_URL,
    token,
    fetch: patientFetch,
  });
  if (action === 'import') {
    if (values.tag !== undefined) throw new UsageError('--tag is for export');
    await importFile(client, file, values.gzip === true, environment);
  } else {
    if (values.gzip !== undefined)
      throw new UsageError('--gzip is for import (an export is compressed on the way anyway)');
    await exportFile(client, file, values.tag, environment);
  }
}

/**
 * fetch without its 5-minute wait for an answer's headers (undici's headersTimeout) or between
 * the chunks of a body: an import is answered when its statement ends, which takes minutes for
 * millions of plants after the last byte is sent, and an export may pause while the database reads.
 */
const patience = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
const patientFetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
  undiciFetch(input as Parameters<typeof undiciFetch>[0], {
    ...(init as Parameters<typeof undiciFetch>[1]),
    dispatcher: patience,
  })) as unknown as typeof fetch;

async function importFile(
  client: PlantStoreClient,
  file: string,
  gzip: boolean,
  environment: PlantsCommandEnvironment,
): Promise<void> {
  const { size } = await stat(file);
  const progress = createProgress(environment.progress, { totalBytes: size });
  try {
    const result = await client.importPlants(file, {
      gzip,
      onProgress: ({ bytes, lines }) => progress.update(lines, bytes),
    });
    progress.done();
    environment.out(
      `imported ${file}: ${result.lines} lines, ${result.stored} stored, ${result.alreadyStored} already stored`,
    );
  } finally {
    progress.done();
  }
}

async function exportFile(
  client: PlantStoreClient,
  file: string,
  tag: string | undefined,
  environment: PlantsCommandEnvironment,
): Promise<void> {
  const output = file === '-' ? environment.stdout : createWriteStream(file);
  const progress = createProgress(environment.progress, {});
  let cursor = '';
  let rows = 0;
  try {
    for await (const plant of client.exportPlants(tag === undefined ? {} : { tag }, {
      onCursor: (at) => (cursor = at),
    })) {
      rows += 1;
      if (!output.write(`${stringifyJson(plant)}\n`)) await once(output, 'drain');
      if (rows % 1_000 === 0) progress.update(rows, 0);
    }
  } finally {
    progress.done();
    if (output !== environment.stdout) {
      output.end();
      await once(output, 'close');
    }
  }
  // On stderr when the plants went to stdout, so that the NDJSON stays clean.
  const summary = `exported ${rows} plants${tag === undefined ? '' : ` tagged ${tag}`}; event feed cursor of the snapshot: ${cursor}`;
  if (file === '-') environment.progress.write(`${summary}\n`);
  else environment.out(summary);
}
