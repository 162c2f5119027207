import { type ClaimedDelivery, DatabaseUnavailableError } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { claimedDelivery } from '../../test-support/claimed-delivery.js';
import { logSink } from '../../test-support/log-sink.js';
import { createCaps } from './caps.js';
import { type ClaimStore, createClaimer, LEASE_MARGIN_MS } from './claimer.js';

type ClaimOptions = Parameters<ClaimStore['claimDeliveries']>[0];

/** Answers each claim with what `answers` holds next (none left: nothing due), keeping what was asked. */
class FakeClaimStore implements ClaimStore {
  readonly asked: ClaimOptions[] = [];
  readonly answers: ClaimedDelivery[][] = [];
  readonly released: ClaimedDelivery[] = [];
  failing = false;

  async claimDeliveries(options: ClaimOptions): Promise<ClaimedDelivery[]> {
    this.asked.push(options);
    if (this.failing) throw new DatabaseUnavailableError();
    return this.answers.shift() ?? [];
  }

  async releaseClaim(claim: ClaimedDelivery): Promise<void> {
    if (this.failing) throw new DatabaseUnavailableError();
    this.released.push(claim);
  }
}

function claimer(store: FakeClaimStore, leaseMs = 10_000, timeoutMs = 2_000) {
  const clock = { at: 50_000 };
  const { log, lines } = logSink();
  return { claims: createClaimer({ store, leaseMs, timeoutMs, log, clock: () => clock.at }), clock, lines };
}

const noneHeld = {
  byWebhook: new Map<string, number>(),
  byReceiver: new Map<string, number>(),
  byTeam: new Map<string, number>(),
};

describe('createClaimer', () => {
  it('asks for lookAhead claims per webhook and receiver cap, less what is held, and names the receivers already full', async () => {
    const store = new FakeClaimStore();
    const { claims } = claimer(store);
    const caps = createCaps({ concurrency: 8, perWebhookConcurrency: 2, perReceiverConcurrency: 3 }).configured;
    const held = {
      byWebhook: new Map([['w1', 1]]),
      byReceiver: new Map([
        ['http://a', 4],
        ['http://b', 3],
      ]),
      byTeam: new Map([['red', 5]]),
    };
    const claimed = await claims.claim(5, caps, held);
    expect(store.asked).toEqual([
      {
        limit: 5,
        perWebhookLimit: 4,
        perReceiverLimit: 6,
        // Half the slots per team (4), lookAhead times.
        perTeamLimit: 8,
        busyReceivers: held.byReceiver,
        busyWebhooks: held.byWebhook,
        busyTeams: held.byTeam,
        leaseMs: 10_000,
      },
    ]);
    // Full at lookAhead x the lower of its cap and its one webhook's: 2 x 2.
    expect(claimed?.fullAtClaim).toEqual(new Set(['http://a']));

    const busy = createCaps({ concurrency: 8, perWebhookConcurrency: 2, perReceiverConcurrency: 3 }).whileBusy;
    await claims.claim(5, busy, noneHeld);
    expect(store.asked[1]).toMatchObject({
      perWebhookLimit: busy.lookAhead,
      perReceiverLimit: busy.lookAhead,
      perTeamLimit: busy.lookAhead * busy.perTeam,
    });
  });

  it('claims when asked to, or once claimAfter deliveries have finished since the last claim', async () => {
    const store = new FakeClaimStore();
    const { claims } = claimer(store);
    const caps = createCaps({ concurrency: 8, perWebhookConcurrency: 2 }).configured;
    expect(claims.due(caps)).toBe(true);
    await claims.claim(1, caps, noneHeld);
    expect(claims.due(caps)).toBe(false);
    claims.deliveryFinished();
    expect(claims.due(caps)).toBe(false);
    claims.deliveryFinished();
    expect(claims.due(caps)).toBe(true);
    await claims.claim(1, caps, noneHeld);
    claims.claimAnyway();
    expect(claims.due(caps)).toBe(true);
  });

  it('gives each claim until its lease ends less an attempt and a margin to start', async () => {
    const claimed = claimedDelivery();
    const store = new FakeClaimStore();
    store.answers.push([claimed]);
    const { claims, clock } = claimer(store);
    const caps = createCaps({ concurrency: 1, perWebhookConcurrency: 1 }).configured;
    expect(await claims.claim(1, caps, noneHeld)).toEqual({
      claims: [claimed],
      fullAtClaim: new Set(),
      startBy: clock.at + 10_000 - 2_000 - LEASE_MARGIN_MS,
    });
    // A lease barely longer than an attempt: half the difference as margin.
    const short = claimer(new FakeClaimStore(), 2_500, 2_000);
    expect((await short.claims.claim(1, caps, noneHeld))?.startBy).toBe(short.clock.at + 250);
  });

  it('rides out a failing store: no claims, one warning, and says when it claims again', async () => {
    const store = new FakeClaimStore();
    store.failing = true;
    const { claims, lines } = claimer(store);
    const caps = createCaps({ concurrency: 1, perWebhookConcurrency: 1 }).configured;
    expect(await claims.claim(1, caps, noneHeld)).toBeNull();
    expect(await claims.claim(1, caps, noneHeld)).toBeNull();
    store.failing = false;
    expect(await claims.claim(1, caps, noneHeld)).not.toBeNull();
    expect(lines.map(({ level, message }) => ({ level, message }))).toEqual([
      { level: 'warn', message: 'webhook dispatch cannot claim deliveries; retrying' },
      { level: 'info', message: 'webhook dispatch claims deliveries again' },
    ]);
  });

  it('hands a claim back, and when it cannot, says so at debug and lets the lease run out', async () => {
    const store = new FakeClaimStore();
    const { claims, lines } = claimer(store);
    const claimed = claimedDelivery();
    await claims.release(claimed);
    expect(store.released).toEqual([claimed]);

    store.failing = true;
    await expect(claims.release(claimed)).resolves.toBeUndefined();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'debug',
        message: 'webhook claim could not be released',
        deliveryId: claimed.deliveryId.toString(),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(claimed.secrets[0] ?? '');
  });
});
