/**
 * The console at a phone's width (390 px) and a laptop's (1280 px) in a real browser (Debian's
 * Chromium, driven by Playwright) against the real service on each engine: every screen, with its
 * forms open and its messages shown, fits the width (no sideways scroll of the page; wide tables
 * scroll inside their own region) and has no serious axe violation.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { overflowsViewport, seriousViolations } from '../test-support/console-browser.js';
import { describeConsole } from '../test-support/console-suite.js';
import { waitUntil } from '../test-support/wait-until.js';

failOnContractViolations();

describeConsole('console-layout-browser.test.ts', "the console's layout", (s) => {
  let folder: string | undefined;
  /** Screenshots once, from the first engine and at 390 px: the wide ones are the other suites'. */
  const shoot = (page: Page, width: number, name: string) => (width === 390 ? s.shoot(page, name) : Promise.resolve());

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'console-layout-'));
    // A subscription with a delivery (its attempts are a table), and a plant with the longest id.
    const webhook = await s.api.createWebhook({ url: s.receiver.url, description: 'narrow' });
    await s.api.createPlant({ id: 9223372036854775807n, name: 'Readable', tag: 'layout' });
    await waitUntil(
      async () =>
        (await s.api.listWebhookDeliveries(webhook.id)).deliveries.some(({ status }) => status === 'delivered'),
      20_000,
      100,
    );
  });
  afterAll(async () => {
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  async function expectReadable(page: Page): Promise<void> {
    expect(await overflowsViewport(page)).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
  }

  it.each([390, 1280])(
    'is readable at %i px wide: no screen, form or message scrolls sideways, and none has a serious axe violation',
    async (width) => {
      const watched = await s.open(width);
      const { page } = watched;
      // Signing in, and a refused token's message.
      await page.getByLabel('Bearer token').fill('pst_not-a-token-of-this-service');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      await expectReadable(page);
      await page.getByLabel('Bearer token').fill(s.manager);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Sections' }).waitFor();
      await page.locator('tbody tr').first().waitFor();
      await expectReadable(page);
      await shoot(page, width, 'plants-390');

      // The import panel, with the line the service refused.
      const broken = join(folder ?? '', 'broken.ndjson');
      await writeFile(broken, '{"id":43,"name":"Fine"}\n{"id":44}\n');
      await page.getByLabel('NDJSON file (.ndjson or .ndjson.gz)').setInputFiles(broken);
      await page.getByRole('button', { name: 'Import plants' }).click();
      await page
        .getByRole('alert')
        .getByText(/^line 2: /)
        .waitFor();
      await expectReadable(page);

      // A plant, with its 19-digit id.
      await page.getByRole('link', { name: '9223372036854775807' }).click();
      await page.getByRole('heading', { name: 'Plant 9223372036854775807', level: 1 }).waitFor();
      await page.getByTestId('plant-version').waitFor();
      await expectReadable(page);

      // The webhooks, with a subscription's change and rotate forms open.
      const sections = page.getByRole('navigation', { name: 'Sections' });
      await sections.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await page.getByRole('button', { name: `Change webhook ${s.receiver.url}` }).click();
      await page.getByRole('form', { name: `Change webhook ${s.receiver.url}` }).waitFor();
      await page.getByRole('button', { name: `Rotate secret of ${s.receiver.url}` }).click();
      await page.getByLabel('Grace period (seconds)').waitFor();
      await expectReadable(page);

      await sections.getByRole('link', { name: 'Tokens' }).click();
      await page.getByRole('heading', { name: 'Tokens', level: 1 }).waitFor();
      await page
        .getByText(/^Loading/)
        .first()
        .waitFor({ state: 'detached' });
      await expectReadable(page);

      // A subscription's deliveries, with its attempts.
      await sections.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('link', { name: `Deliveries of ${s.receiver.url}` }).click();
      await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
      await page.getByTestId('delivery').locator('tbody tr').first().waitFor();
      await expectReadable(page);
      await shoot(page, width, 'deliveries-390');
      expect(watched.problems).toEqual([]);
    },
  );
});
