/**
 * The console in a real browser (Debian's Chromium, driven by Playwright) against the real
 * service on each engine: every flow a team has, as a person would go through it, with axe-core
 * checking each screen. PLANT_STORE_WRITE_SCREENSHOTS=1 writes the screenshots into docs/console.
 */
import { createPlantStoreClient } from '@plant-store/client';
import { testToken } from '@plant-store/db/testing';
import { expect, it } from 'vitest';
import { EXPIRED_TOKEN_MESSAGE, missingScopeMessage } from '../middleware/bearer-auth.js';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { refreshDeliveriesUntil, type WatchedPage } from '../test-support/console-browser.js';
import { describeConsole } from '../test-support/console-suite.js';
import { waitUntil } from '../test-support/wait-until.js';

failOnContractViolations();

describeConsole('console-browser.test.ts', 'the console', (s) => {
  /** Everything the page asked for came from the service itself. */
  function expectSameOrigin({ requested }: WatchedPage): void {
    const origin = new URL(s.service.url).origin;
    expect(requested.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  }

  it('signs in with a token kept in sessionStorage only, and signs out forgetting it', async () => {
    const watched = await s.open();
    const { page } = watched;
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Plant Store console');
    await s.expectAccessible(page);
    await s.shoot(page, 'sign-in');
    await page.getByLabel('Bearer token').fill(s.manager);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Plants', level: 1 }).waitFor();
    await expect(page.evaluate<string | null>("sessionStorage.getItem('plant-store-console.token')")).resolves.toBe(
      s.manager,
    );
    await expect(page.evaluate<number>('localStorage.length')).resolves.toBe(0);
    await expect(page.evaluate<string>('document.cookie')).resolves.toBe('');
    expect(await watched.context.cookies()).toEqual([]);
    expect(watched.requested.some((url) => url.includes(s.manager))).toBe(false);
    expect(page.url()).not.toContain(s.manager);
    // The health strip: the service's version and readiness.
    await expect(page.getByTestId('service-version').textContent()).resolves.toMatch(/^\d+\.\d+\.\d+/);
    await page.getByTestId('service-ready').getByText('ready', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Bearer token').waitFor();
    await expect(page.evaluate<number>('sessionStorage.length')).resolves.toBe(0);
    expect(watched.problems).toEqual([]);
    expectSameOrigin(watched);
  });

  it('keeps its Content-Security-Policy: an injected inline script does not run', async () => {
    const { page } = await s.open();
    await page.getByLabel('Bearer token').waitFor();
    const violation = await page.evaluate<string>(`new Promise((resolve) => {
        document.addEventListener('securitypolicyviolation', (event) => resolve(event.effectiveDirective + ' ' + event.blockedURI), { once: true });
        const script = document.createElement('script');
        script.textContent = 'window.inlineScriptRan = true';
        document.body.append(script);
      })`);
    expect(violation).toBe('script-src-elem inline');
    await expect(page.evaluate<boolean>("'inlineScriptRan' in window")).resolves.toBe(false);
  });

  it('plants: create, browse by page and tag, look one up by its exact id, change and delete under If-Match', async () => {
    for (let id = 1n; id <= 23n; id++) {
      await s.api.createPlant({ id, name: `Plant ${id}`, ...(id % 5n === 0n ? { tag: 'fern' } : {}) });
    }
    const watched = await s.signIn(s.manager);
    const { page } = watched;
    const bigId = '9223372036854775807';
    await page.getByLabel('Id', { exact: true }).fill(bigId);
    await page.getByLabel('Name', { exact: true }).fill('Monstera deliciosa');
    await page.getByLabel('Tag (optional)').fill('aroid');
    await page.getByRole('button', { name: 'Create plant' }).click();
    await page.getByText(`Created plant ${bigId} (Monstera deliciosa).`).waitFor();
    await expect(s.api.getPlant(BigInt(bigId))).resolves.toEqual({
      id: 9223372036854775807n,
      name: 'Monstera deliciosa',
      tag: 'aroid',
    });

    // Browse: 20 a page, then the rest with the new plant last.
    const rows = page.locator('tbody tr');
    await waitUntil(async () => (await rows.count()) === 20);
    await expect(rows.first().locator('td').first().textContent()).resolves.toBe('1');
    await s.expectAccessible(page);
    await s.shoot(page, 'plants');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2').waitFor();
    await waitUntil(async () => (await rows.count()) === 4);
    await expect(rows.last().locator('td').first().textContent()).resolves.toBe(bigId);
    // And back: the first page again, as it was.
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText('Page 1').waitFor();
    await waitUntil(async () => (await rows.count()) === 20);
    await expect(rows.locator('td.id').first().textContent()).resolves.toBe('1');
    await expect(page.getByRole('button', { name: 'Previous page' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Tag', { exact: true }).fill('fern');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('Page 2').waitFor({ state: 'detached' });
    await waitUntil(async () => (await rows.count()) === 4);
    await expect(rows.locator('td.id').allTextContents()).resolves.toEqual(['5', '10', '15', '20']);
    await page.getByLabel('Tag', { exact: true }).fill('no such tag');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No plants tagged “no such tag”.').waitFor();

    // Look up by id: exact, all 19 digits.
    await page.getByLabel('Plant id').fill(bigId);
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: `Plant ${bigId}`, level: 1 }).waitFor();
    const version = page.getByTestId('plant-version');
    const first = await version.textContent();
    await s.expectAccessible(page);
    await s.shoot(page, 'plant');

    // Change it: the version moves on.
    await page.getByLabel('Name', { exact: true }).fill('Monstera borsigiana');
    await page.getByLabel('Tag (empty removes it)').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText(/^Saved: version \d+\.$/).waitFor();
    expect(await version.textContent()).not.toBe(first);
    await expect(s.api.getPlant(BigInt(bigId))).resolves.toEqual({ id: BigInt(bigId), name: 'Monstera borsigiana' });

    // Someone else changes it meanwhile: the page's version is stale, the service refuses.
    const now = await s.api.updatePlant(BigInt(bigId), { tag: 'changed elsewhere' });
    await page.getByLabel('Name', { exact: true }).fill('Lost update');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .getByRole('alert')
      .getByText(`plant ${bigId} has version "${now.version}", none of those If-Match names`)
      .waitFor();
    await page.getByRole('button', { name: `Delete plant ${bigId}` }).click();
    await page.getByRole('button', { name: `Confirm delete plant ${bigId}` }).click();
    await page
      .getByRole('alert')
      .getByText(/none of those If-Match names/)
      .waitFor();
    await expect(s.api.getPlant(BigInt(bigId))).resolves.toMatchObject({ name: 'Monstera borsigiana' });

    // Reloaded, it deletes.
    await page.getByRole('button', { name: 'Reload' }).click();
    await waitUntil(async () => (await version.textContent()) === String(now.version));
    await page.getByRole('button', { name: `Delete plant ${bigId}` }).click();
    await page.getByRole('button', { name: `Confirm delete plant ${bigId}` }).click();
    await page.getByRole('heading', { name: 'Plants', level: 1 }).waitFor();
    await expect(s.api.getPlant(BigInt(bigId))).rejects.toMatchObject({ status: 404 });

    // An id that is no int64 is refused before anything is sent.
    await page.getByLabel('Plant id').fill('9223372036854775808');
    await page.getByRole('button', { name: 'Open' }).click();
    await page
      .getByRole('alert')
      .getByText(/The id must be an integer between/)
      .waitFor();
    expect(watched.problems).toEqual([]);
    expectSameOrigin(watched);
  });

  it("webhooks: register (the secret shown once, copied), a failing receiver's attempts, resend, delete", async () => {
    s.receiver.answer(() => 503);
    const watched = await s.signIn(s.manager);
    const { page, context } = watched;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(s.service.url).origin });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No subscriptions yet: register a receiver above.').waitFor();
    await page.getByLabel('Receiver URL').fill(s.receiver.url);
    await page.getByLabel('Description (optional)').fill('inventory sync');
    await page.getByRole('button', { name: 'Register' }).click();
    const secret = page.getByTestId('webhook-secret');
    await expect(secret.textContent()).resolves.toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied.').waitFor();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(await secret.textContent());
    await s.expectAccessible(page);
    await s.shoot(page, 'webhooks');
    const [webhook] = await s.api.listWebhooks();
    if (webhook === undefined) throw new Error('no webhook registered');
    expect(webhook).toMatchObject({ url: s.receiver.url, description: 'inventory sync' });

    // A plant created: its delivery fails every attempt (the receiver answers 503).
    await s.api.createPlant({ id: 900n, name: 'Pilea' });
    await page.getByRole('link', { name: `Deliveries of ${s.receiver.url}` }).click();
    await page.getByRole('heading', { name: 'Deliveries', level: 1 }).waitFor();
    const delivery = page.getByTestId('delivery');
    await refreshDeliveriesUntil(page, 'failed');
    // Every attempt: its time, status, duration, and the start of the receiver's answer.
    const attempts = delivery.locator('tbody tr');
    // The refresh that saw it may be followed by one still loading: wait for the list it shows.
    await waitUntil(async () => (await attempts.count()) === 3);
    await expect(attempts.first().locator('td').nth(1).textContent()).resolves.toBe('503');
    await expect(attempts.first().locator('td').nth(2).textContent()).resolves.toMatch(/^\d+ ms$/);
    await expect(attempts.first().locator('td').nth(3).textContent()).resolves.toBe('HTTP 503ok');
    await expect(attempts.first().locator('.excerpt').textContent()).resolves.toBe('ok');
    await page.getByLabel('Status').selectOption('failed');
    await waitUntil(async () => (await delivery.count()) === 1);
    await s.expectAccessible(page);
    await s.shoot(page, 'deliveries');

    // The receiver is back: resend every failed delivery, and it is delivered.
    s.receiver.answer(() => 200);
    await page.getByRole('button', { name: 'Resend failed' }).click();
    await page.getByText('Queued 1 failed delivery again.').waitFor();
    await page.getByLabel('Status').selectOption('');
    await refreshDeliveriesUntil(page, 'delivered');
    // The refresh that saw it may be followed by one still loading: wait for the list it shows.
    await waitUntil(async () => (await attempts.count()) === 4);
    await expect(attempts.last().locator('td').nth(1).textContent()).resolves.toBe('200');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No failed deliveries.').waitFor();

    // Resend one: a delivered delivery is sent once more.
    await page.getByLabel('Status').selectOption('');
    const received = s.receiver.received.length;
    await page.getByRole('button', { name: /^Resend delivery \d+$/ }).click();
    await page.getByText(/^Delivery \d+ queued again\.$/).waitFor();
    await s.receiver.waitFor(received + 1);

    // Delete, asked twice.
    await page.getByRole('link', { name: 'Back to webhooks' }).click();
    await page.getByRole('button', { name: `Delete webhook ${s.receiver.url}` }).click();
    await page.getByRole('button', { name: `Confirm delete webhook ${s.receiver.url}` }).click();
    await page.getByText('No subscriptions yet: register a receiver above.').waitFor();
    await expect(s.api.listWebhooks()).resolves.toEqual([]);
    expect(watched.problems).toEqual([]);
    expectSameOrigin(watched);
  });

  it('tokens: issue one (shown once), list, revoke; the audit log shows who did it', async () => {
    const watched = await s.signIn(s.manager);
    const { page } = watched;
    await page.getByRole('link', { name: 'Tokens' }).click();
    const tokens = page.locator('section', { has: page.getByRole('heading', { name: 'Active tokens' }) });
    await tokens.getByRole('cell', { name: /^console-manager/ }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('catalogue-reader');
    await page.getByLabel('plants:read').check();
    // The platform's policy: a team's tokens expire within a year. First without: the service says so.
    await page.getByRole('button', { name: 'Issue token' }).click();
    await page
      .getByRole('alert')
      .getByText(/must expire within 365 days/)
      .waitFor();
    // In 30 days (the field is in the browser's time zone, which is the test's).
    const inAMonth = new Date(Date.now() + 30 * 86_400_000);
    const local = new Date(inAMonth.getTime() - inAMonth.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Expires (optional)').fill(local);
    await page.getByRole('button', { name: 'Issue token' }).click();
    const issued = page.getByTestId('issued-token');
    const token = await issued.textContent();
    expect(token).toMatch(/^pst_/);
    await tokens.getByRole('cell', { name: /^catalogue-reader/ }).waitFor();
    // The token issued works, with the scope asked for.
    const reader = createPlantStoreClient({ baseUrl: s.service.url, token: token ?? '', retry: { attempts: 1 } });
    await expect(reader.listPlants()).resolves.toBeDefined();
    await s.expectAccessible(page);
    await s.shoot(page, 'tokens');

    await page.getByRole('button', { name: 'Revoke token catalogue-reader' }).click();
    await page.getByRole('button', { name: 'Confirm revoke token catalogue-reader' }).click();
    await page.getByText('Revoked catalogue-reader.').waitFor();
    await tokens.getByRole('cell', { name: /^catalogue-reader/ }).waitFor({ state: 'detached' });
    await expect(reader.listPlants()).rejects.toMatchObject({ status: 401 });

    // The audit log, oldest first: the issue and the revocation are on its pages.
    const log = page.locator('section', { has: page.getByRole('heading', { name: 'Audit log' }) });
    const actions: string[] = [];
    for (;;) {
      await log.locator('tbody tr').first().waitFor();
      const rows = await log
        .locator('tbody tr')
        .evaluateAll((found: Array<{ cells: ArrayLike<{ textContent: string | null }> }>) =>
          found.map((row) =>
            Array.from(row.cells)
              .slice(1, 4)
              .map((cell) => cell.textContent)
              .join(' | '),
          ),
        );
      actions.push(...rows);
      const next = log.getByRole('button', { name: 'Next page' });
      if ((await next.count()) === 0 || (await next.isDisabled())) break;
      const page1 = await log.locator('tbody tr').first().textContent();
      await next.click();
      await waitUntil(async () => (await log.locator('tbody tr').first().textContent()) !== page1);
    }
    expect(actions).toEqual(
      expect.arrayContaining([
        'console-manager (token) | token.issued | catalogue-reader',
        'console-manager (token) | token.revoked | catalogue-reader',
      ]),
    );
    expect(watched.problems).toEqual([]);
    expectSameOrigin(watched);
  });

  it("a read-only token: what it may read shows, what it may not do is refused with the API's message", async () => {
    await s.api.createPlant({ id: 500n, name: 'Readable' });
    const { token } = await s.service.db.issueToken(testToken({ name: 'read-only', scopes: ['plants:read'] }));
    const watched = await s.signIn(token);
    const { page } = watched;
    await page.locator('tbody tr').first().waitFor();
    await page.getByLabel('Id', { exact: true }).fill('777');
    await page.getByLabel('Name', { exact: true }).fill('Not allowed');
    await page.getByRole('button', { name: 'Create plant' }).click();
    await page.getByRole('alert').getByText(missingScopeMessage('plants:write')).waitFor();
    await expect(s.api.getPlant(777n)).rejects.toMatchObject({ status: 404 });

    // A plant opens; saving a change and deleting it are refused, and it stays as it was.
    await page.getByLabel('Plant id').fill('500');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('heading', { name: 'Plant 500', level: 1 }).waitFor();
    const version = await page.getByTestId('plant-version').textContent();
    await page.getByLabel('Name', { exact: true }).fill('Renamed');
    const [saved] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'PATCH'),
      page.getByRole('button', { name: 'Save changes' }).click(),
    ]);
    expect(saved.status()).toBe(403);
    await page.getByRole('alert').getByText(missingScopeMessage('plants:write')).waitFor();
    await page.getByRole('button', { name: 'Delete plant 500' }).click();
    const [deleted] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'DELETE'),
      page.getByRole('button', { name: 'Confirm delete plant 500' }).click(),
    ]);
    expect(deleted.status()).toBe(403);
    await page.getByRole('alert').getByText(missingScopeMessage('plants:write')).waitFor();
    await page.getByRole('heading', { name: 'Plant 500', level: 1 }).waitFor();
    await expect(page.getByTestId('plant-version').textContent()).resolves.toBe(version);
    await expect(s.api.getPlant(500n)).resolves.toEqual({ id: 500n, name: 'Readable' });
    await s.expectAccessible(page);
    await page.getByRole('link', { name: 'Back to plants' }).click();

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('alert').getByText(missingScopeMessage('webhooks:manage')).waitFor();
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('alert').getByText(missingScopeMessage('tokens:manage')).first().waitFor();
    await s.expectAccessible(page);
    expect(watched.problems).toEqual([]);
  });

  it('an expired token: the page says so and asks for a new one', async () => {
    const { token } = await s.service.db.issueToken(
      testToken({ name: 'expired', scopes: ['plants:read'], expiresAt: new Date(Date.now() - 60_000) }),
    );
    const { page } = await s.open();
    await page.getByLabel('Bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The first call is refused: back to signing in, saying why.
    await page
      .getByRole('alert')
      .getByText(`Your token was refused: ${EXPIRED_TOKEN_MESSAGE} Sign in with a new token.`)
      .waitFor();
    await page.getByLabel('Bearer token').waitFor();
    await expect(page.evaluate<number>('sessionStorage.length')).resolves.toBe(0);
    await s.expectAccessible(page);
    // A new token signs in again.
    await page.getByLabel('Bearer token').fill(s.manager);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Plants', level: 1 }).waitFor();
  });

  it('too many requests: the page says when to retry', async () => {
    await s.api.createPlant({ id: 500n, name: 'Readable' });
    const { token } = await s.service.db.issueToken(
      testToken({ name: 'limited', scopes: ['plants:read'], rateLimit: { requests: 2, perSeconds: 60 } }),
    );
    const watched = await s.signIn(token);
    const { page } = watched;
    await page.locator('tbody tr').first().waitFor();
    // The listing took one; each filter asks again.
    for (let round = 0; round < 3; round++) {
      await page.getByLabel('Tag', { exact: true }).fill(`tag-${round}`);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('Loading plants…').waitFor({ state: 'detached' });
    }
    await page
      .getByRole('alert')
      .getByText(/^Too many requests: .+\. Retry in \d+ s\.$/)
      .waitFor();
    await s.expectAccessible(page);
  });

  it('is usable by keyboard alone: sign in, move between sections, act', async () => {
    const { page } = await s.open();
    await page.getByLabel('Bearer token').waitFor();
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.id')).resolves.toBe('token');
    await page.keyboard.type(s.manager);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Plants', level: 1 }).waitFor();
    // Skip link, then the sections.
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect(page.evaluate<string>('document.activeElement.textContent')).resolves.toBe('Webhooks');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.getByLabel('Receiver URL').focus();
    await page.keyboard.type('ftp://not-http.example/');
    await page.keyboard.press('Enter');
    // The browser's own check refuses it first (type=url accepts ftp:); the service's message shows.
    await page.getByRole('alert').getByText('url must be an absolute http:// or https:// URL').waitFor();
  });
});
