import { createPlantStoreClient, type PlantStoreClient } from '@plant-store/client';
import { createTestStorage, type TestEngine, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { checkedFetch } from './checked-fetch.js';
import {
  BROWSER_MISSING,
  launchChromium,
  openPage,
  SKIP_BROWSER,
  screenshot,
  seriousViolations,
  type WatchedPage,
} from './console-browser.js';
import { startTestService, type TestService } from './test-service.js';
import { FAST_WEBHOOKS } from './webhook-end-to-end.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

// The set-up every console browser suite shares: Debian's Chromium, and on each engine the real
// service with a webhook receiver, a token with every scope the screens use, the API as that token,
// and pages signed in with any token.

/** Every scope the console's screens use. */
export const MANAGER_SCOPES = ['plants:read', 'plants:write', 'webhooks:manage', 'tokens:manage'] as const;

/** One engine's suite: what its tests use, each set up before them (reading one earlier throws). */
export interface ConsoleSuite {
  readonly engine: TestEngine;
  readonly browser: Browser;
  readonly storage: TestStorage;
  readonly service: TestService;
  readonly receiver: WebhookReceiver;
  /** A token of MANAGER_SCOPES. */
  readonly manager: string;
  /** The API as `manager`, every answer checked against the contract, no retries. */
  readonly api: PlantStoreClient;
  /** A fresh page (its own sessionStorage) `width` px wide on /console, closed after the engine's tests. */
  open(width?: number): Promise<WatchedPage>;
  /** A fresh page signed in with `token`, the sections shown. */
  signIn(token: string, width?: number): Promise<WatchedPage>;
  /** No serious or critical axe-core violation on the page as it is now. */
  expectAccessible(page: Page): Promise<void>;
  /** A screenshot for the docs, from the first engine only: the page is the same on both. */
  shoot(page: Page, name: string): Promise<void>;
}

/**
 * `body` once per test engine, inside a suite named `<title> in headless Chromium`, skipped (and
 * saying so, in the output and in its name) where the browser is missing unless
 * PLANT_STORE_REQUIRE_BROWSER=1 makes that fail. `env` configures the service.
 */
export function describeConsole(
  file: string,
  title: string,
  body: (suite: ConsoleSuite) => void,
  env: Record<string, string> = FAST_WEBHOOKS,
): void {
  if (SKIP_BROWSER) {
    // A skipped suite is easy to miss in a green run: say why.
    console.warn(
      `${file}: skipping the headless Chromium tests: ${BROWSER_MISSING}; set PLANT_STORE_REQUIRE_BROWSER=1 to fail instead`,
    );
  }
  describe.skipIf(SKIP_BROWSER)(
    `${title} in headless Chromium${SKIP_BROWSER ? ` (skipped: ${BROWSER_MISSING})` : ''}`,
    () => {
      let browser: Browser | undefined;
      beforeAll(async () => {
        browser = await launchChromium();
      });
      afterAll(async () => {
        await browser?.close();
      });
      describe.each(testEngines())('on %s', (engine) => {
        body(engineSuite(engine, () => browser, env));
      });
    },
  );
}

/** The engine's service, receiver, token and client, set up before its tests and closed after. */
function engineSuite(
  engine: TestEngine,
  browser: () => Browser | undefined,
  env: Record<string, string>,
): ConsoleSuite {
  let storage: TestStorage | undefined;
  let service: TestService | undefined;
  let receiver: WebhookReceiver | undefined;
  let manager: string | undefined;
  let api: PlantStoreClient | undefined;
  const opened: WatchedPage[] = [];
  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage, env);
    receiver = await startWebhookReceiver();
    manager = (await service.db.issueToken(testToken({ name: 'console-manager', scopes: [...MANAGER_SCOPES] }))).token;
    api = createPlantStoreClient({ baseUrl: service.url, token: manager, fetch: checkedFetch, retry: { attempts: 1 } });
  });
  afterAll(async () => {
    for (const { context } of opened) await context.close();
    await receiver?.close();
    await service?.close();
    await storage?.dispose();
  });

  const suite: ConsoleSuite = {
    engine,
    get browser() {
      return setUp(browser(), 'the browser');
    },
    get storage() {
      return setUp(storage, 'the storage');
    },
    get service() {
      return setUp(service, 'the service');
    },
    get receiver() {
      return setUp(receiver, 'the receiver');
    },
    get manager() {
      return setUp(manager, 'the manager token');
    },
    get api() {
      return setUp(api, 'the client');
    },
    async open(width = 1280) {
      const watched = await openPage(suite.browser, width);
      opened.push(watched);
      await watched.page.goto(new URL('/console', suite.service.url).href);
      return watched;
    },
    async signIn(token, width = 1280) {
      const watched = await suite.open(width);
      await watched.page.getByLabel('Bearer token').fill(token);
      await watched.page.getByRole('button', { name: 'Sign in' }).click();
      await watched.page.getByRole('navigation', { name: 'Sections' }).waitFor();
      return watched;
    },
    async expectAccessible(page) {
      expect(await seriousViolations(page)).toEqual([]);
    },
    shoot: (page, name) => (engine === 'pglite' ? screenshot(page, name) : Promise.resolve()),
  };
  return suite;
}

function setUp<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is set up before the suite's tests, not yet`);
  return value;
}
