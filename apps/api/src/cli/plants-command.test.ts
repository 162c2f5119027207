import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test-support/test-service.js';
import { type PlantsCommandEnvironment, runPlantsCommand } from './plants-command.js';
import { describeProgress } from './progress.js';
import { UsageError } from './token-command.js';

describe.each(testEngines())('plant-store plants import|export on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let folder: string;
  let token: string;

  /** The command's environment: its lines, and what it drew on a terminal (or not). */
  function environment(tty: boolean, env: Record<string, string> = {}) {
    const lines: string[] = [];
    const drawn: string[] = [];
    const run: PlantsCommandEnvironment = {
      env: { PLANT_STORE_URL: service.url, PLANT_STORE_TOKEN: token, ...env },
      out: (line) => lines.push(line),
      progress: { isTTY: tty, write: (text: string) => drawn.push(text) },
      stdout: new PassThrough(),
    };
    return { run, lines, drawn };
  }

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    token = (await service.db.issueToken(testToken({ name: 'mover', scopes: ['plants:read', 'plants:write'] }))).token;
    folder = await mkdtemp(join(tmpdir(), 'plants-command-'));
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('imports a file through the API and exports the plants back to a file, quiet when not on a terminal', async () => {
    const file = join(folder, 'in.ndjson');
    const lines = Array.from(
      { length: 3_000 },
      (_, i) => `{"id":${9_223_372_036_854_772_807n + BigInt(i)},"name":"p${i}"}`,
    );
    await writeFile(file, `${lines.join('\n')}\n`);
    const first = environment(false);
    await runPlantsCommand(['import', file], first.run);
    expect(first.lines).toEqual([`imported ${file}: 3000 lines, 3000 stored, 0 already stored`]);
    expect(first.drawn).toEqual([]);

    const out = join(folder, 'out.ndjson');
    const second = environment(false);
    await runPlantsCommand(['export', out], second.run);
    expect(second.lines[0]).toMatch(/^exported 3000 plants; event feed cursor of the snapshot: \d+\.0$/);
    expect(await readFile(out, 'utf8')).toBe(`${lines.join('\n')}\n`);
  });

  it('draws a progress bar on a terminal, and names the bad line of a refused import', async () => {
    const file = join(folder, 'again.ndjson');
    await writeFile(file, '{"id":1,"name":"one"}\n{"id":2,"name":""}\n');
    const refused = environment(true, { PLANT_STORE_TOKEN: token });
    await expect(runPlantsCommand(['import', '--gzip', file], refused.run)).rejects.toMatchObject({
      status: 400,
      message: 'line 2: name must be a string of 1 to 255 characters',
    });
    // The bar was drawn, then its line cleared.
    expect(refused.drawn[0]?.startsWith('\r\x1b[2K[########################] 100%  2 rows')).toBe(true);
    expect(refused.drawn.at(-1)).toBe('\r\x1b[2K');
    expect(describeProgress(50_000, 25, 2, 100)).toBe(
      '[######------------------]  25%  50,000 rows  25,000 rows/s  time left 0:06',
    );
  });

  it('refuses a missing token and an unknown action before sending anything', async () => {
    const none = environment(false, { PLANT_STORE_TOKEN: '' });
    await expect(runPlantsCommand(['export', '-'], none.run)).rejects.toBeInstanceOf(UsageError);
    await expect(runPlantsCommand(['copy', 'x'], environment(false).run)).rejects.toBeInstanceOf(UsageError);
  });
});
