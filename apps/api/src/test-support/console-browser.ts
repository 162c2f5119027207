import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { waitUntil } from './wait-until.js';

// What the console's browser suites share: Debian's Chromium, a page that records every problem,
// axe-core run inside it, screenshots.

/** Debian's Chromium (`apt-get install chromium`); Playwright's own browser download cannot run here. */
export const CHROMIUM = '/usr/bin/chromium';
/** CI sets it, so that a missing browser fails the suite instead of skipping it. */
export const REQUIRE_BROWSER = process.env.PLANT_STORE_REQUIRE_BROWSER === '1';
/** Why the browser suites cannot run here, or null when they can. */
export const BROWSER_MISSING = existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (apt-get install chromium)`;
export const SKIP_BROWSER = BROWSER_MISSING !== null && !REQUIRE_BROWSER;

/** Where screenshots go: the test artifacts, or docs/console with PLANT_STORE_WRITE_SCREENSHOTS=1. */
export const SCREENSHOT_DIR = fileURLToPath(
  process.env.PLANT_STORE_WRITE_SCREENSHOTS === '1'
    ? new URL('../../../../docs/console/', import.meta.url)
    : new URL('../../test-results/console/', import.meta.url),
);

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export async function launchChromium(): Promise<Browser> {
  if (BROWSER_MISSING !== null) throw new Error(`PLANT_STORE_REQUIRE_BROWSER=1 but ${BROWSER_MISSING}`);
  return chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium calls Google's hosts at start-up.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page and everything that went wrong on it, and every URL it asked for. */
export interface WatchedPage {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly problems: string[];
  readonly requested: string[];
}

/**
 * A fresh context (its own sessionStorage) at `width`, with axe-core loaded into every page as the
 * browser's own script (through the DevTools protocol, so the page's CSP does not block it, and
 * the page's own policy stays in force). `expectedStatuses` are answers the test provokes.
 */
export async function openPage(browser: Browser, width = 1280): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  await context.addInitScript({ path: AXE_SCRIPT });
  const page = await context.newPage();
  const problems: string[] = [];
  const requested: string[] = [];
  page.on('console', (message) => {
    // The browser logs every 4xx answer to a fetch as an error: the tests provoke those on purpose.
    if (message.type() === 'error' && !/the server responded with a status of 4\d\d/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (failed) => {
    // A load the page aborted itself (a newer one replaced it) is no problem.
    if (failed.failure()?.errorText !== 'net::ERR_ABORTED') {
      problems.push(`failed: ${failed.url()} ${failed.failure()?.errorText}`);
    }
  });
  page.on('request', (sent) => requested.push(sent.url()));
  return { context, page, problems, requested };
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  /** The elements it was found on (CSS selectors, the first few). */
  readonly targets: string[];
}

/** axe-core's violations on the page as it is now: only the serious and critical ones. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Page code as text: this package compiles without the DOM's types.
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document).then((results) =>
    results.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.slice(0, 5).map((node) => node.target.join(' ')) })))`);
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage: true });
}

/** Whether the page is wider than its viewport (a horizontal scroll bar): unreadable at that width. */
export async function overflowsViewport(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > window.innerWidth');
}

/**
 * Presses Refresh on a subscription's deliveries until their statuses, in the page's order and
 * joined with commas, read `statuses` (the dispatcher works on its own time).
 */
export async function refreshDeliveriesUntil(page: Page, statuses: string): Promise<void> {
  const delivery = page.getByTestId('delivery');
  await waitUntil(
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByText('Loading deliveries…').waitFor({ state: 'detached' });
      return (await delivery.locator('.status').allTextContents()).join() === statuses;
    },
    20_000,
    100,
  );
}
