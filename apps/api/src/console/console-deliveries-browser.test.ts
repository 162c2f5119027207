/**
 * The console's deliveries screen in a real browser (Debian's Chromium, driven by Playwright)
 * against the real service on each engine: paging through more deliveries than a page holds,
 * resending only the failed deliveries inside a range, and attempts that got no answer at all
 * (connection refused, timed out) shown with their time and error; axe-core on each.
 */
import type { DeliveryStatus, WebhookDelivery } from '@plant-store/client';
import type { Page } from 'playwright-core';
import { expect, it, onTestFinished } from 'vitest';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { describeConsole } from '../test-support/console-suite.js';
import { freePort } from '../test-support/free-port.js';
import { waitUntil } from '../test-support/wait-until.js';
import { startWebhookReceiver } from '../test-support/webhook-receiver.js';

failOnContractViolations();

/** `date` as a datetime-local field's value: the browser's time zone, which is the test's. */
function localMinute(date: Date): string {
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

describeConsole('console-deliveries-browser.test.ts', "the console's deliveries", (s) => {
  async function removeWebhooks(): Promise<void> {
    for (const webhook of await s.api.listWebhooks()) await s.api.deleteWebhook(webhook.id);
  }

  /** Every delivery of the subscription, by the API, once `done` holds for them (the dispatcher is done with them). */
  async function settledDeliveries(
    webhookId: string,
    done: (deliveries: WebhookDelivery[]) => boolean,
  ): Promise<WebhookDelivery[]> {
    let deliveries: WebhookDelivery[] = [];
    await waitUntil(
      async () => {
        deliveries = (await s.api.listWebhookDeliveries(webhookId, { limit: 100 })).deliveries;
        return done(deliveries);
      },
      20_000,
      100,
    );
    return deliveries;
  }

  const allAre = (status: DeliveryStatus, count: number) => (deliveries: WebhookDelivery[]) =>
    deliveries.length === count && deliveries.every((delivery) => delivery.status === status);

  /** From any screen to a subscription's deliveries, as a person goes. */
  async function openDeliveries(page: Page, url: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: `Deliveries of ${url}` }).click();
    await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
    await page.getByText('Loading deliveries…').waitFor({ state: 'detached' });
  }

  /** The ids of the deliveries the page shows, in its order (each card's first id is the delivery's). */
  function shownIds(page: Page): Promise<string[]> {
    return page
      .getByTestId('delivery')
      .evaluateAll((cards: Array<{ querySelector(selector: string): { textContent: string | null } | null }>) =>
        cards.map((card) => card.querySelector('.id')?.textContent ?? ''),
      );
  }

  it('deliveries: more than a page, 20 at a time, Next and Previous', async () => {
    onTestFinished(removeWebhooks);
    s.receiver.answer(() => 200);
    const webhook = await s.api.createWebhook({ url: s.receiver.url });
    for (let id = 1_001n; id <= 1_025n; id++) await s.api.createPlant({ id, name: `Paged ${id}` });
    const ids = (await settledDeliveries(webhook.id, allAre('delivered', 25))).map(({ id }) => String(id));

    const watched = await s.signIn(s.manager);
    const { page } = watched;
    await openDeliveries(page, s.receiver.url);
    const pager = page.getByRole('navigation', { name: 'Delivery pages' });
    await pager.getByText('Page 1').waitFor();
    await expect(shownIds(page)).resolves.toEqual(ids.slice(0, 20));
    await expect(pager.getByRole('button', { name: 'Previous page' }).isDisabled()).resolves.toBe(true);
    await s.expectAccessible(page);

    await pager.getByRole('button', { name: 'Next page' }).click();
    await pager.getByText('Page 2').waitFor();
    await waitUntil(async () => (await page.getByTestId('delivery').count()) === 5);
    await expect(shownIds(page)).resolves.toEqual(ids.slice(20));
    await expect(pager.getByRole('button', { name: 'Next page' }).isDisabled()).resolves.toBe(true);

    await pager.getByRole('button', { name: 'Previous page' }).click();
    await pager.getByText('Page 1').waitFor();
    await waitUntil(async () => (await page.getByTestId('delivery').count()) === 20);
    await expect(shownIds(page)).resolves.toEqual(ids.slice(0, 20));
    // A status filter starts again at the first page.
    await pager.getByRole('button', { name: 'Next page' }).click();
    await pager.getByText('Page 2').waitFor();
    await page.getByLabel('Status').selectOption('delivered');
    await pager.getByText('Page 1').waitFor();
    await waitUntil(async () => (await page.getByTestId('delivery').count()) === 20);
    await expect(shownIds(page)).resolves.toEqual(ids.slice(0, 20));
    expect(watched.problems).toEqual([]);
  });

  it('resend failed in a range: only the failed deliveries inside it are queued again', async () => {
    onTestFinished(removeWebhooks);
    s.receiver.answer(() => 503);
    const webhook = await s.api.createWebhook({ url: s.receiver.url });
    for (let id = 2_001n; id <= 2_004n; id++) await s.api.createPlant({ id, name: `Failing ${id}` });
    const failed = await settledDeliveries(webhook.id, allAre('failed', 4));
    const [first, second, third, fourth] = failed.map(({ id }) => String(id));
    const attempts = failed[0]?.attempts.length ?? 0;
    expect(attempts).toBe(3);

    const watched = await s.signIn(s.manager);
    const { page } = watched;
    await openDeliveries(page, s.receiver.url);
    await waitUntil(async () => (await page.getByTestId('delivery').count()) === 4);
    s.receiver.answer(() => 200);
    const received = s.receiver.received.length;
    const resend = page.locator('section', {
      has: page.getByRole('heading', { name: 'Resend failed deliveries' }),
    });

    // Created from a minute after all of them: none is in the range, none is sent.
    const latest = Math.max(...failed.map(({ createdAt }) => new Date(createdAt).getTime()));
    await resend.getByLabel('Created from').fill(localMinute(new Date(latest + 60_000)));
    await resend.getByRole('button', { name: 'Resend failed' }).click();
    await resend.getByText('No failed deliveries in that range.').waitFor();
    await s.expectAccessible(page);

    // After the first, up to the third, created from the minute the first was: the second and third.
    await resend.getByLabel('Created from').fill(localMinute(new Date(failed[0]?.createdAt ?? 0)));
    await resend.getByLabel('After delivery id').fill(first ?? '');
    await resend.getByLabel('Up to delivery id').fill(third ?? '');
    await resend.getByRole('button', { name: 'Resend failed' }).click();
    await resend.getByText('Queued 2 failed deliveries again.').waitFor();
    const after = await settledDeliveries(
      webhook.id,
      (deliveries) => deliveries.filter(({ status }) => status === 'delivered').length === 2,
    );
    expect(after.map(({ id, status, attempts }) => [String(id), status, attempts.length])).toEqual([
      [first, 'failed', 3],
      [second, 'delivered', 4],
      [third, 'delivered', 4],
      [fourth, 'failed', 3],
    ]);
    expect(s.receiver.received.length - received).toBe(2);
    // Pressed again, the same range holds no failed delivery any more.
    await resend.getByRole('button', { name: 'Resend failed' }).click();
    await resend.getByText('No failed deliveries in that range.').waitFor();

    // The page shows the same: the two outside the range are the failed ones.
    await page.getByLabel('Status').selectOption('failed');
    await waitUntil(async () => (await shownIds(page)).join() === [first, fourth].join());
    await page.getByLabel('Status').selectOption('delivered');
    await waitUntil(async () => (await shownIds(page)).join() === [second, third].join());
    await s.expectAccessible(page);
    expect(watched.problems).toEqual([]);
  });

  it('an attempt that got no answer (connection refused, timed out): its time, no status, its error', async () => {
    onTestFinished(removeWebhooks);
    const refusing = `http://127.0.0.1:${await freePort()}/hook`;
    const hanging = await startWebhookReceiver();
    onTestFinished(() => hanging.close());
    hanging.answer(() => 'hang');
    const refused = await s.api.createWebhook({ url: refusing });
    const timedOut = await s.api.createWebhook({ url: hanging.url });
    await s.api.createPlant({ id: 3_001n, name: 'Unanswered' });

    const watched = await s.signIn(s.manager);
    const { page } = watched;
    for (const [webhook, url, error] of [
      [refused, refusing, /^connection refused$/],
      [timedOut, hanging.url, /^timed out after 1 s$/],
    ] as const) {
      const [delivery] = await settledDeliveries(webhook.id, allAre('failed', 1));
      const attempt = delivery?.attempts[0];
      expect(attempt).toMatchObject({ error: expect.stringMatching(error) });
      expect(attempt?.statusCode ?? null).toBeNull();
      await openDeliveries(page, url);
      const rows = page.getByTestId('delivery').locator('tbody tr');
      await waitUntil(async () => (await rows.count()) === delivery?.attempts.length);
      const cells = rows.first().locator('td');
      // The time as the page's own locale writes it.
      const time = await page.evaluate<string>(`new Date(${JSON.stringify(attempt?.attemptedAt)}).toLocaleString()`);
      expect(time).not.toBe('Invalid Date');
      await expect(cells.nth(0).textContent()).resolves.toBe(time);
      await expect(cells.nth(1).textContent()).resolves.toBe('none');
      await expect(cells.nth(2).textContent()).resolves.toBe(`${attempt?.latencyMs} ms`);
      await expect(cells.nth(3).locator('.error-text').textContent()).resolves.toBe(attempt?.error);
      await expect(cells.nth(3).locator('.excerpt').count()).resolves.toBe(0);
      await s.expectAccessible(page);
    }
    expect(watched.problems).toEqual([]);
  });
});
