/**
 * The published packages as another team gets them: `pnpm pack` both, install the tarballs with
 * npm into a fresh project outside the workspace (valibot beside them, as the peer dependency
 * asks), type-check a small consumer with `module: nodenext`, and run it against the built
 * service. One pack, one install (npm's cache keeps it quick), one service.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltService, startBuiltService } from './built-service.js';

const execFileAsync = promisify(execFile);
/** Each command of the setup has a deadline of its own, so that a hang fails naming the command. */
const COMMAND_TIMEOUT_MS = 150_000;
/**
 * npm's own deadline for one registry request (its default is 5 minutes): a request that stalls
 * (seen once on a fresh machine: the whole install hung past 90 s) is retried soon instead.
 */
const NPM_FETCH_SETTINGS = ['--fetch-timeout=15000', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=5000'];

function run(command: string, args: readonly string[], options: { readonly cwd?: string } = {}) {
  const started = performance.now();
  return execFileAsync(command, args, { ...options, timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL' })
    .catch((error: unknown) => {
      throw new Error(`${command} ${args.join(' ')} failed: ${(error as Error).message}`, { cause: error });
    })
    .finally(() => process.stderr.write(`${command} ${args[0]}: ${Math.round(performance.now() - started)} ms\n`));
}
const WORKSPACE = fileURLToPath(new URL('../../..', import.meta.url));
const TSC = fileURLToPath(new URL('../node_modules/.bin/tsc', import.meta.url));
const VALIBOT_VERSION = /^ {2}valibot: (\S+)$/m;
/**
 * Other Node binaries to run the consumer on as well, separated by `:` (set by
 * .ci/published-packages-on-node-lines.sh for the lines that `engines` names besides the pin).
 */
const OTHER_NODES = (process.env.PLANT_STORE_CONSUMER_NODES ?? '').split(':').filter(Boolean);

/** The consumer: typed against the installed packages' own declarations. */
const CONSUMER = `import { createPlantStoreClient, isPlantStoreError, type StoredPlant } from '@plant-store/client';
import { NewPlantSchema, stringifyJson } from '@plant-store/schema';
import * as v from 'valibot';

/** Creates a plant whose id is past 2^53 and reads it back; returns both as exact JSON. */
export async function createAndRead(baseUrl: string, token: string): Promise<string> {
  const client = createPlantStoreClient({ baseUrl, token });
  const id: bigint = 2n ** 53n + 1n;
  const input = v.parse(NewPlantSchema, { id, name: 'Monstera', tag: 'aroid' });
  const created: StoredPlant = await client.createPlant(input);
  const read: StoredPlant = await client.getPlant(id);
  let missing = 0;
  try {
    await client.getPlant(id + 1n);
  } catch (error) {
    if (isPlantStoreError(error)) missing = error.error;
  }
  return stringifyJson({ created, read, exact: read.id === id, missing });
}
`;
/** What it prints: the plant as created and as read, the same exact id. */
const CONSUMER_OUTPUT =
  '{"created":{"id":9007199254740993,"name":"Monstera","tag":"aroid"},' +
  '"read":{"id":9007199254740993,"name":"Monstera","tag":"aroid"},"exact":true,"missing":404}';
/** Not type-checked: hands the command line to the compiled consumer. */
const MAIN = `import { createAndRead } from './dist/consumer.js';
process.stdout.write(await createAndRead(process.argv[2], process.argv[3]));
`;
const TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2023',
    lib: ['es2023', 'dom'],
    types: [],
    strict: true,
    skipLibCheck: false,
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

let project: string;
let tarballs: { schema: string; client: string };
let service: BuiltService | undefined;

async function pack(name: 'schema' | 'client', destination: string): Promise<string> {
  const { stdout } = await run('pnpm', ['pack', '--pack-destination', destination], {
    cwd: join(WORKSPACE, 'packages', name),
  });
  const tarball = stdout.trim().split('\n').at(-1);
  if (!tarball?.endsWith('.tgz')) throw new Error(`pnpm pack printed no tarball: ${stdout}`);
  return tarball;
}

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'plant-store-consumer-'));
  const packed = join(project, 'packed');
  await mkdir(packed);
  tarballs = { schema: await pack('schema', packed), client: await pack('client', packed) };
  const catalog = await readFile(join(WORKSPACE, 'pnpm-workspace.yaml'), 'utf8');
  const valibot = VALIBOT_VERSION.exec(catalog)?.[1];
  if (!valibot) throw new Error('no valibot in the pnpm catalog');

  await writeFile(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'consumer', private: true, type: 'module' })}\n`,
  );
  await writeFile(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  await mkdir(join(project, 'src'));
  await writeFile(join(project, 'src', 'consumer.ts'), CONSUMER);
  await writeFile(join(project, 'main.js'), MAIN);
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...NPM_FETCH_SETTINGS,
      tarballs.schema,
      tarballs.client,
      `valibot@${valibot}`,
    ],
    { cwd: project },
  );
  const starting = performance.now();
  service = await startBuiltService();
  process.stderr.write(`service start: ${Math.round(performance.now() - starting)} ms\n`);
});

afterAll(async () => {
  await service?.stop();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed packages, installed with npm outside the workspace', () => {
  it('ship a version range for the schema, valibot as a peer, and no tests', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'node_modules/@plant-store/client/package.json'), 'utf8'));
    expect(manifest.dependencies['@plant-store/schema']).toMatch(/^\^\d+\.\d+\.\d+$/);
    expect(manifest.peerDependencies).toEqual({ valibot: expect.stringMatching(/^\^1\./) });
    expect(manifest.private).toBeUndefined();
    for (const tarball of [tarballs.schema, tarballs.client]) {
      const { stdout } = await run('tar', ['-tzf', tarball]);
      expect(stdout).toContain('package/LICENSE');
      expect(stdout).toContain('package/dist/index.d.ts');
      expect(stdout).not.toMatch(/\.test(-d)?\.ts|test-support/);
    }
    // The client uses the installed schema package, not a second copy from somewhere else.
    await expect(
      readFile(join(project, 'node_modules/@plant-store/client/node_modules/@plant-store/schema/package.json')),
    ).rejects.toThrow();
  });

  it('type-check a consumer with module nodenext, which creates and reads a plant past 2^53 exactly', async () => {
    await run(TSC, ['-p', join(project, 'tsconfig.json')]);
    if (!service) throw new Error('no service');
    const { stdout } = await run(process.execPath, ['main.js', service.url, service.token], { cwd: project });
    expect(stdout).toBe(CONSUMER_OUTPUT);
  });

  it.runIf(OTHER_NODES.length > 0)('run the consumer on the other Node lines that engines names', async () => {
    if (!service) throw new Error('no service');
    for (const [index, node] of OTHER_NODES.entries()) {
      // A new plant each time (the id is the consumer's): delete the one before.
      await fetch(new URL('/plants/9007199254740993', service.url), {
        method: 'DELETE',
        headers: { authorization: `Bearer ${service.token}` },
      });
      const { stdout } = await run(node, ['main.js', service.url, service.token], { cwd: project });
      expect(stdout, `${node} (${index})`).toBe(CONSUMER_OUTPUT);
    }
  });
});
