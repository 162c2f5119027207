import { userInfo } from 'node:os';
import { openDatabase } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, loadConfig } from '../config.js';
import { runTokenCommand, USAGE, UsageError } from './token-command.js';

describe('USAGE', () => {
  it('names every scope and the default', () => {
    expect(USAGE).toContain('Scopes: plants:read, plants:write, webhooks:manage, tokens:manage, platform:admin.');
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
      'Issued token "default-scopes" of team "default" with scopes plants:read plants:write. It is shown this once only:',
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
      new UsageError(
        'unknown scope "webhooks:admin"; scopes are plants:read, plants:write, webhooks:manage, tokens:manage, platform:admin',
      ),
    );
    expect(await scopesOf('admin')).toBeUndefined();
  });

  it('issues a token that expires and has a rate limit of its own, checked as POST /tokens checks them', async () => {
    const lines = await run(
      'create',
      '--name',
      'limited',
      '--scope',
      'tokens:manage',
      '--expires-at',
      '2099-01-01T00:00:00Z',
      '--rate-limit',
      '600/60',
    );
    expect(lines[0]).toBe(
      'Issued token "limited" of team "default" with scopes tokens:manage, expiring 2099-01-01T00:00:00.000Z, limited to 600 requests per 60 s. It is shown this once only:',
    );
    for (const [args, message] of [
      [['--expires-at', '2001-01-01T00:00:00Z'], 'expiresAt must be in the future'],
      [['--expires-at', 'tomorrow'], 'expiresAt must be an RFC 3339 date-time string'],
      [['--rate-limit', '600'], '--rate-limit must be REQUESTS/SECONDS, e.g. 600/60'],
      [['--rate-limit', '0/60'], 'rateLimit.requests must be an integer between 1 and 1000000'],
      [['--rate-limit', '10/86401'], 'rateLimit.perSeconds must be an integer between 1 and 86400'],
    ] as const) {
      await expect(run('create', '--name', 'refused', ...args)).rejects.toThrow(new UsageError(message));
    }
    await expect(run('create', '--name', 'two words')).rejects.toThrow(
      new UsageError('name must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit'),
    );
    expect(await scopesOf('refused')).toBeUndefined();
  });

  it('lists tokens with their scopes, expiry, last use, limit and state, revoked ones too', async () => {
    await run('create', '--name', 'to-revoke');
    await run('revoke', 'to-revoke');
    const lines = await run('list');
    const columns = '\\tcreated \\S+\\texpires never\\tlast used never\\tlimit default';
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^hooks\\tteam default\\twebhooks:manage${columns}\\tactive$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^default-scopes\\tteam default\\tplants:read,plants:write${columns}\\tactive$`),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^limited\tteam default\ttokens:manage\tcreated \S+\texpires 2099-01-01T00:00:00.000Z\tlast used never\tlimit 600\/60s\tactive$/,
      ),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^to-revoke\t.*\trevoked \S+$/));
  });

  it("issues a token for any team with --team, recorded in that team's audit log as the command line's OS user", async () => {
    const lines = await run('create', '--name', 'shop-bot', '--team', 'shop.front-end', '--scope', 'plants:read');
    expect(lines[0]).toBe(
      'Issued token "shop-bot" of team "shop.front-end" with scopes plants:read. It is shown this once only:',
    );
    await expect(run('create', '--name', 'badly-teamed', '--team', 'two words')).rejects.toThrow(
      new UsageError('--team: team must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit'),
    );
    expect(await scopesOf('badly-teamed')).toBeUndefined();
    await run('revoke', 'shop-bot');
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      const { events } = await db.listAuditEvents({ team: 'shop.front-end', limit: 10 });
      expect(events.map((event) => [event.action, event.target, event.actor.kind, event.actor.team])).toEqual([
        ['token.issued', 'shop-bot', 'cli', null],
        ['token.revoked', 'shop-bot', 'cli', null],
      ]);
      expect(events[0]?.actor.name).toBe(userInfo().username);
      expect(events[0]?.clientAddress).toBeNull();
    } finally {
      await db.close();
    }
  });
});
