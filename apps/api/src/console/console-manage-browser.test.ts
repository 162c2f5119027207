/**
 * The console's second round in a real browser (Debian's Chromium, driven by Playwright) against
 * the real service on each engine: changing a subscription, rotating its secret, a test event,
 * disabling and enabling (by hand, and by the service after days of failures), importing a plants
 * file and exporting one; a read-only token; axe-core on each changed screen.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { testToken } from '@plant-store/db/testing';
import { parseJson } from '@plant-store/schema';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { missingScopeMessage } from '../middleware/bearer-auth.js';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { refreshDeliveriesUntil } from '../test-support/console-browser.js';
import { describeConsole } from '../test-support/console-suite.js';
import { waitUntil } from '../test-support/wait-until.js';
import { FAST_WEBHOOKS } from '../test-support/webhook-end-to-end.js';

failOnContractViolations();

describeConsole(
  'console-manage-browser.test.ts',
  "the console's webhook changes and plant files",
  (s) => {
    let folder: string | undefined;
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'console-files-'));
    });
    afterAll(async () => {
      if (folder !== undefined) await rm(folder, { recursive: true, force: true });
    });

    async function removeWebhooks(): Promise<void> {
      for (const webhook of await s.api.listWebhooks()) await s.api.deleteWebhook(webhook.id);
    }

    it('webhooks: register with event types, change one, rotate its secret (shown once), send a test, disable and enable', async () => {
      onTestFinished(removeWebhooks);
      s.receiver.answer(() => 200);
      const watched = await s.signIn(s.manager);
      const { page, context } = watched;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(s.service.url).origin });
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByText('No subscriptions yet: register a receiver above.').waitFor();
      const create = page.locator('section', { has: page.getByRole('heading', { name: 'Register a receiver' }) });
      await create.getByLabel('Receiver URL').fill(s.receiver.url);
      await create.getByLabel('plant.deleted').check();
      await create.getByRole('button', { name: 'Register' }).click();
      const original = await page.getByTestId('webhook-secret').textContent();
      const [created] = await s.api.listWebhooks();
      if (created === undefined) throw new Error('no webhook registered');
      expect(created.eventTypes).toEqual(['plant.created', 'plant.deleted']);
      const state = page.getByTestId('webhook-state');
      await expect(state.textContent()).resolves.toBe('Enabled · events: plant.created, plant.deleted');

      // Change: a new URL, a description, other event types.
      const changedUrl = `${s.receiver.url}/changed`;
      await page.getByRole('button', { name: `Change webhook ${s.receiver.url}` }).click();
      const form = page.getByRole('form', { name: `Change webhook ${s.receiver.url}` });
      await form.getByLabel('New receiver URL').fill(changedUrl);
      await form.getByLabel('New description').fill('inventory sync');
      await form.getByLabel('plant.created').uncheck();
      await form.getByLabel('plant.updated').check();
      await s.expectAccessible(page);
      await s.shoot(page, 'webhook-change');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText(`Changed ${changedUrl}.`).waitFor();
      await expect(state.textContent()).resolves.toBe('Enabled · events: plant.updated, plant.deleted');
      await expect(s.api.listWebhooks()).resolves.toMatchObject([
        {
          id: created.id,
          url: changedUrl,
          description: 'inventory sync',
          eventTypes: ['plant.updated', 'plant.deleted'],
        },
      ]);
      // None checked: the service refuses, and says why; nothing changes.
      await page.getByRole('button', { name: `Change webhook ${changedUrl}` }).click();
      const again = page.getByRole('form', { name: `Change webhook ${changedUrl}` });
      await again.getByLabel('plant.updated').uncheck();
      await again.getByLabel('plant.deleted').uncheck();
      await again.getByRole('button', { name: 'Save changes' }).click();
      await page
        .getByRole('alert')
        .getByText(/^eventTypes must be a non-empty array/)
        .waitFor();
      await again.getByRole('button', { name: 'Cancel' }).click();
      await expect(s.api.listWebhooks()).resolves.toMatchObject([{ eventTypes: ['plant.updated', 'plant.deleted'] }]);

      // Rotate, with no grace period: the new secret shown once, copied; the old one stops.
      await page.getByRole('button', { name: `Rotate secret of ${changedUrl}` }).click();
      await page.getByLabel('Grace period (seconds)').fill('0');
      await page.getByRole('button', { name: 'Rotate now' }).click();
      const rotated = page.getByTestId('rotated-secret');
      const secret = await rotated.textContent();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(secret).not.toBe(original);
      await page.getByText(/the previous one stopped at once\.$/).waitFor();
      await page.getByRole('button', { name: 'Copy new secret' }).click();
      await page.getByText('Copied.').waitFor();
      await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(secret);
      await s.expectAccessible(page);
      await s.shoot(page, 'webhook-rotated');
      await page.getByRole('button', { name: 'Hide secret' }).click();
      await rotated.waitFor({ state: 'detached' });
      // With a grace period: until when the previous one signs too.
      await page.getByRole('button', { name: `Rotate secret of ${changedUrl}` }).click();
      await page.getByLabel('Grace period (seconds)').fill('3600');
      await page.getByRole('button', { name: 'Rotate now' }).click();
      await page.getByText(/the previous one signs too until .+\.$/).waitFor();
      await page.getByRole('button', { name: 'Hide secret' }).click();

      // A test event: it reaches the receiver, and shows in the deliveries.
      const received = s.receiver.received.length;
      await page.getByRole('button', { name: `Send test event to ${changedUrl}` }).click();
      const queued = await page.getByText(/^Test event queued as delivery \d+: see Deliveries\.$/).textContent();
      const deliveryId = /delivery (\d+)/.exec(queued ?? '')?.[1];
      const [test] = await s.receiver.waitFor(received + 1).then((all) => all.slice(received));
      expect(parseJson(test?.body ?? '')).toMatchObject({ type: 'webhook.test' });
      await page.getByRole('link', { name: `Deliveries of ${changedUrl}` }).click();
      await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
      await refreshDeliveriesUntil(page, 'delivered');
      await page.getByRole('button', { name: `Resend delivery ${deliveryId}` }).waitFor();

      // Disable by hand, then enable.
      await page.getByRole('link', { name: 'Back to webhooks' }).click();
      await page.getByRole('button', { name: `Disable webhook ${changedUrl}` }).click();
      await page.getByText(`Disabled ${changedUrl}.`).waitFor();
      const [disabled] = await s.api.listWebhooks();
      expect(disabled?.enabled).toBe(false);
      await waitUntil(async () => (await state.textContent())?.startsWith('Disabled since ') === true);
      if (disabled?.disabledReason !== undefined) {
        await expect(state.textContent()).resolves.toContain(`: ${disabled.disabledReason}`);
      }
      await s.expectAccessible(page);
      await page.getByRole('button', { name: `Enable webhook ${changedUrl}` }).click();
      await page.getByText(`Enabled ${changedUrl}.`).waitFor();
      await expect(state.textContent()).resolves.toBe('Enabled · events: plant.updated, plant.deleted');
      await expect(s.api.listWebhooks()).resolves.toMatchObject([{ enabled: true }]);
      expect(watched.problems).toEqual([]);
    });

    it("a subscription the service disabled after its receiver failed: the service's reason shown, enabled again", async () => {
      onTestFinished(removeWebhooks);
      s.receiver.answer(() => 500);
      await s.api.createWebhook({ url: s.receiver.url });
      await s.api.createPlant({ id: 300n, name: 'Failing' });
      await waitUntil(async () => (await s.api.listWebhooks())[0]?.enabled === false, 20_000, 100);
      const [disabled] = await s.api.listWebhooks();
      expect(disabled?.disabledReason).toMatch(/^disabled by the service: every delivery attempt failed/);
      const { page } = await s.signIn(s.manager);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      const state = page.getByTestId('webhook-state');
      await state.waitFor();
      await expect(state.textContent()).resolves.toMatch(
        new RegExp(
          `^Disabled since .+: ${(disabled?.disabledReason ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · events: plant.created$`,
        ),
      );
      await s.expectAccessible(page);
      await s.shoot(page, 'webhook-disabled');
      s.receiver.answer(() => 200);
      await page.getByRole('button', { name: `Enable webhook ${s.receiver.url}` }).click();
      await page.getByText(`Enabled ${s.receiver.url}.`).waitFor();
      // Its pending delivery goes out now.
      await waitUntil(
        async () =>
          (await s.api.listWebhookDeliveries(disabled?.id ?? '')).deliveries.some(
            ({ status }) => status === 'delivered',
          ),
        20_000,
        100,
      );
    });

    it('plants: import a file as it is (NDJSON, gzip), see the refused line, and export to a file', async () => {
      const plain = join(folder ?? '', 'plants.ndjson');
      await writeFile(
        plain,
        '{"id":9223372036854775806,"name":"Imported","tag":"files"}\n{"id":41,"name":"Also","tag":"files"}\n',
      );
      const gzipped = join(folder ?? '', 'more.ndjson.gz');
      await writeFile(gzipped, gzipSync('{"id":42,"name":"From gzip","tag":"files"}\n'));
      const broken = join(folder ?? '', 'broken.ndjson');
      await writeFile(broken, '{"id":43,"name":"Fine"}\n{"id":44}\n');

      const watched = await s.signIn(s.manager);
      const { page } = watched;
      const file = page.getByLabel('NDJSON file (.ndjson or .ndjson.gz)');
      await file.setInputFiles(plain);
      await page.getByRole('button', { name: 'Import plants' }).click();
      await page.getByText('Imported plants.ndjson: 2 lines, 2 stored, 0 already stored.').waitFor();
      await expect(s.api.getPlant(9223372036854775806n)).resolves.toEqual({
        id: 9223372036854775806n,
        name: 'Imported',
        tag: 'files',
      });
      await file.setInputFiles(gzipped);
      await page.getByRole('button', { name: 'Import plants' }).click();
      await page.getByText('Imported more.ndjson.gz: 1 line, 1 stored, 0 already stored.').waitFor();
      await file.setInputFiles(plain);
      await page.getByRole('button', { name: 'Import plants' }).click();
      await page.getByText('Imported plants.ndjson: 2 lines, 0 stored, 2 already stored.').waitFor();
      await file.setInputFiles(broken);
      await page.getByRole('button', { name: 'Import plants' }).click();
      await page
        .getByRole('alert')
        .getByText(/^line 2: /)
        .waitFor();
      await expect(s.api.getPlant(43n)).rejects.toMatchObject({ status: 404 });
      await s.expectAccessible(page);
      await s.shoot(page, 'plants-import');

      // Export: the tagged plants, downloaded as NDJSON, ids exact.
      await page.getByLabel('Tag', { exact: true }).fill('files');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('The plants tagged “files”, as NDJSON.').waitFor();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export plants' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('plants-files.ndjson');
      const saved = await readFile((await download.path()) ?? '', 'utf8');
      expect(saved).toBe(
        '{"id":41,"name":"Also","tag":"files"}\n{"id":42,"name":"From gzip","tag":"files"}\n{"id":9223372036854775806,"name":"Imported","tag":"files"}\n',
      );
      await page.getByText('Exported 3 plants.').waitFor();
      await s.expectAccessible(page);
      expect(watched.problems).toEqual([]);
    });

    it("a read-only token: its import is refused with the API's message, its export works, no webhook controls", async () => {
      await s.api.createPlant({ id: 600n, name: 'Readable', tag: 'read-only' });
      await s.api.createWebhook({ url: s.receiver.url });
      onTestFinished(removeWebhooks);
      const { token } = await s.service.db.issueToken(testToken({ name: 'read-only', scopes: ['plants:read'] }));
      const watched = await s.signIn(token);
      const { page } = watched;
      const file = join(folder ?? '', 'not-allowed.ndjson');
      await writeFile(file, '{"id":601,"name":"Not allowed"}\n');
      await page.getByLabel('NDJSON file (.ndjson or .ndjson.gz)').setInputFiles(file);
      await page.getByRole('button', { name: 'Import plants' }).click();
      await page.getByRole('alert').getByText(missingScopeMessage('plants:write')).waitFor();
      await expect(s.api.getPlant(601n)).rejects.toMatchObject({ status: 404 });
      await page.getByLabel('Tag', { exact: true }).fill('read-only');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('The plants tagged “read-only”, as NDJSON.').waitFor();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export plants' }).click(),
      ]);
      expect(await readFile((await download.path()) ?? '', 'utf8')).toBe(
        '{"id":600,"name":"Readable","tag":"read-only"}\n',
      );

      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('alert').getByText(missingScopeMessage('webhooks:manage')).waitFor();
      for (const name of [/^Change webhook/, /^Rotate secret/, /^Send test event/, /^Disable webhook/]) {
        await expect(page.getByRole('button', { name }).count()).resolves.toBe(0);
      }
      // Its create form is there, and refused.
      await page.getByLabel('Receiver URL').fill(s.receiver.url);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('alert').getByText(missingScopeMessage('webhooks:manage')).nth(1).waitFor();
      await expect(s.api.listWebhooks()).resolves.toHaveLength(1);
      await s.expectAccessible(page);
      expect(watched.problems).toEqual([]);
    });
  },
  // A subscription whose every attempt fails for 864 ms is disabled by the service; twenty
  // retries 200 ms apart keep its delivery failing that long.
  {
    ...FAST_WEBHOOKS,
    WEBHOOKS_DISABLE_AFTER_DAYS: '0.00001',
    WEBHOOKS_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '200ms').join(','),
  },
);
