/**
 * The console at a phone's width (390 px) and a laptop's (1280 px) in a real browser (Debian's
 * Chromium, driven by Playwright) against the real service on each engine: every screen, with its
 * forms open and its messages shown, fits the width (no sideways scroll of the page; wide tables
 * scroll inside their own region) and has no serious axe violation.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlantStoreClient, type PlantStoreClient } from '@plant-store/client';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import {
  BROWSER_MISSING,
  launchChromium,
  openPage,
  overflowsViewport,
  SKIP_BROWSER,
  screenshot,
  seriousViolations,
  type WatchedPage,
} from '../test-support/console-browser.js';
import { startTestService, type TestService } from '../test-support/test-service.js';
import { waitUntil } from '../test-support/wait-until.js';
import { FAST_WEBHOOKS } from '../test-support/webhook-end-to-end.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test-support/webhook-receiver.js';

failOnContractViolations();

if (SKIP_BROWSER) {
  console.warn(
    `console-layout-browser.test.ts: skipping the headless Chromium tests: ${BROWSER_MISSING}; set PLANT_STORE_REQUIRE_BROWSER=1 to fail instead`,
  );
}

const MANAGER_SCOPES = ['plants:read', 'plants:write', 'webhooks:manage', 'tokens:manage'] as const;

describe.skipIf(SKIP_BROWSER)(
  `the console's layout in headless Chromium${SKIP_BROWSER ? ` (skipped: ${BROWSER_MISSING})` : ''}`,
  () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    describe.each(testEngines())('on %s', (engine) => {
      let storage: TestStorage;
      let service: TestService;
      let receiver: WebhookReceiver;
      let manager: string;
      let api: PlantStoreClient;
      let folder: string;
      const opened: WatchedPage[] = [];
      /** Screenshots once, from the first engine and at 390 px: the wide ones are the other suites'. */
      const shoot = (page: Page, width: number, name: string) =>
        engine === 'pglite' && width === 390 ? screenshot(page, name) : Promise.resolve();

      beforeAll(async () => {
        storage = await createTestStorage(engine, { migrated: true });
        service = await startTestService(storage, FAST_WEBHOOKS);
        receiver = await startWebhookReceiver();
        manager = (await service.db.issueToken(testToken({ name: 'console-manager', scopes: [...MANAGER_SCOPES] })))
          .token;
        api = createPlantStoreClient({
          baseUrl: service.url,
          token: manager,
          fetch: checkedFetch,
          retry: { attempts: 1 },
        });
        folder = await mkdtemp(join(tmpdir(), 'console-layout-'));
        // A subscription with a delivery (its attempts are a table), and a plant with the longest id.
        const webhook = await api.createWebhook({ url: receiver.url, description: 'narrow' });
        await api.createPlant({ id: 9223372036854775807n, name: 'Readable', tag: 'layout' });
        await waitUntil(
          async () =>
            (await api.listWebhookDeliveries(webhook.id)).deliveries.some(({ status }) => status === 'delivered'),
          20_000,
          100,
        );
      });
      afterAll(async () => {
        for (const { context } of opened) await context.close();
        await receiver?.close();
        await service?.close();
        await storage?.dispose();
        if (folder !== undefined) await rm(folder, { recursive: true, force: true });
      });

      async function expectReadable(page: Page): Promise<void> {
        expect(await overflowsViewport(page)).toBe(false);
        expect(await seriousViolations(page)).toEqual([]);
      }

      it.each([390, 1280])(
        'is readable at %i px wide: no screen, form or message scrolls sideways, and none has a serious axe violation',
        async (width) => {
          const watched = await openPage(browser, width);
          opened.push(watched);
          const { page } = watched;
          await page.goto(new URL('/console', service.url).href);
          // Signing in, and a refused token's message.
          await page.getByLabel('Bearer token').fill('pst_not-a-token-of-this-service');
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('alert').waitFor();
          await expectReadable(page);
          await page.getByLabel('Bearer token').fill(manager);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('navigation', { name: 'Sections' }).waitFor();
          await page.locator('tbody tr').first().waitFor();
          await expectReadable(page);
          await shoot(page, width, 'plants-390');

          // The import panel, with the line the service refused.
          const broken = join(folder, 'broken.ndjson');
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
          await page.getByRole('button', { name: `Change webhook ${receiver.url}` }).click();
          await page.getByRole('form', { name: `Change webhook ${receiver.url}` }).waitFor();
          await page.getByRole('button', { name: `Rotate secret of ${receiver.url}` }).click();
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
          await page.getByRole('link', { name: `Deliveries of ${receiver.url}` }).click();
          await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
          await page.getByTestId('delivery').locator('tbody tr').first().waitFor();
          await expectReadable(page);
          await shoot(page, width, 'deliveries-390');
          expect(watched.problems).toEqual([]);
        },
      );
    });
  },
);
