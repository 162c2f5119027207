import { openDatabase } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../config.js';
import { runTokenCommand, USAGE, UsageError } from './token-command.js';

describe('USAGE', () => {
  it('names every scope and the default', () => {
    expect(USAGE).toContain('Scopes: plants:read, plants:write, webhooks:manage.');
    expect(USAGE).toContain('Without --scope a token gets plants:read and plants:write;');
  });
});

describe.each(testEngines())('the token command on %s', (engine) => {
  let storage: TestStorage;
  let config: Config;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    config = loadConfig({
      DATA_DIR: storage.dataDir,
      ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
    });
  });
  afterAll(async () => {
    await storage?.dispose();
  });

  async function run(...argv: string[]): Promise<string[]> {
    const lines: string[] = [];
    await runTokenCommand(argv, config, { out: (line) => lines.push(line) });
    return lines;
  }

  /** The scopes the database holds for the active token `name`. */
  async function scopesOf(name: string): Promise<readonly string[] | undefined> {
    const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      return (await db.listTokens()).find((token) => token.name === name && token.revokedAt === null)?.scopes;
    } finally {
      await db.close();
    }
  }

  it('grants plants:read and plants:write without --scope, never webhooks:manage', async () => {
    const lines = await run('create', '--name', 'default-scopes');
    expect(lines[0]).toBe(
      'Issued token "default-scopes" with scopes plants:read plants:write. It is shown this once only:',
    );
    expect(lines[1]).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    expect(await scopesOf('default-scopes')).toEqual(['plants:read', 'plants:write']);
  });

  it('grants webhooks:manage when asked, alone or with others, each scope once', async () => {
    expect((await run('create', '--name', 'hooks', '--scope', 'webhooks:manage'))[0]).toContain(
      'with scopes webhooks:manage.',
    );
    expect(await scopesOf('hooks')).toEqual(['webhooks:manage']);
    await run(
      'create',
      '--name',
      'everything',
      '--scope',
      'plants:read',
      '--scope',
      'webhooks:manage',
      '--scope',
      'plants:read',
    );
    expect(await scopesOf('everything')).toEqual(['plants:read', 'webhooks:manage']);
  });

  it('refuses an unknown scope, naming the known ones, and issues nothing', async () => {
    await expect(run('create', '--name', 'admin', '--scope', 'webhooks:admin')).rejects.toThrow(
      new UsageError('unknown scope "webhooks:admin"; scopes are plants:read, plants:write, webhooks:manage'),
    );
    expect(await scopesOf('admin')).toBeUndefined();
  });

  it('lists tokens with their scopes', async () => {
    const lines = await run('list');
    expect(lines).toContainEqual(expect.stringMatching(/^hooks\twebhooks:manage\tcreated \S+\tactive$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^default-scopes\tplants:read,plants:write\tcreated \S+\tactive$/),
    );
  });
});
