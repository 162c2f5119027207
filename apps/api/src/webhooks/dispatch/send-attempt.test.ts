import { INVALID_SPAN_CONTEXT, type Span, trace } from '@opentelemetry/api';
import type { ClaimedDelivery } from '@plant-store/db';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { claimedDelivery } from '../../test-support/claimed-delivery.js';
import { logSink } from '../../test-support/log-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test-support/webhook-receiver.js';
import type { PostWebhookResult } from '../safe-http.js';
import { type AttemptSenderOptions, createAttemptSender } from './send-attempt.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver();
  cleanups.push(() => started.close());
  return started;
}

/** A sender to loopback receivers, closed after the test. */
function sender(options: Partial<AttemptSenderOptions> = {}) {
  const { log, lines } = logSink();
  const shutdown = new AbortController();
  const sends = createAttemptSender({
    allowPrivateNetworks: true,
    timeoutMs: 5_000,
    signal: shutdown.signal,
    log,
    ...options,
  });
  cleanups.push(() => sends.close());
  return { sends, lines, shutdown };
}

describe('createAttemptSender', () => {
  it('POSTs the exact body, signed for the attempt’s own time', async () => {
    const hooks = await receiver();
    const claimed = claimedDelivery({ url: hooks.url, payload: '{"id":9007199254740993,"name":"Monstera"}' });
    // A moment ago (an attempt's time is taken before it is signed), within the receiver's tolerance.
    const at = new Date(Date.now() - 1_250);
    const { sends } = sender();

    expect(await sends.send(claimed, at)).toMatchObject({ statusCode: 200, error: null });
    const [received] = hooks.received;
    expect(received?.body).toBe(claimed.payload);
    expect(received?.headers).toMatchObject({
      'webhook-id': claimed.eventId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    });
    // Verified as a receiver would.
    expect(() =>
      new Webhook(claimed.secrets[0] ?? '').verify(received?.body ?? '', received?.headers ?? {}, { jsonParse: false }),
    ).not.toThrow();
  });

  it('sends the traceparent its span adds, and ends the span with how the attempt went', async () => {
    const hooks = await receiver();
    hooks.answer(() => 503);
    const claimed = claimedDelivery({ url: hooks.url });
    const span: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const started: ClaimedDelivery[] = [];
    const ended: Array<{ readonly span: Span; readonly result: PostWebhookResult }> = [];
    const { sends } = sender({
      tracing: {
        start(traced, headers) {
          started.push(traced);
          headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
          return span;
        },
        end: (endedSpan, result) => ended.push({ span: endedSpan, result }),
      },
    });

    const result = await sends.send(claimed, new Date());
    expect(started).toEqual([claimed]);
    expect(hooks.received[0]?.headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(ended).toEqual([{ span, result }]);
    expect(result).toMatchObject({ statusCode: 503, error: 'HTTP 503' });
  });

  it('sends nothing with a secret it cannot sign with, and logs the claim’s ids, never the secret', async () => {
    const hooks = await receiver();
    const claimed = claimedDelivery({ url: hooks.url, secrets: ['whsec_not*base64*at*all'] });
    const { sends, lines } = sender();
    expect(await sends.send(claimed, new Date())).toEqual({
      statusCode: null,
      latencyMs: 0,
      error: 'could not sign the request',
    });
    expect(hooks.received).toHaveLength(0);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        message: 'webhook signing failed',
        deliveryId: claimed.deliveryId.toString(),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain('not*base64*at*all');
  });

  it('ends an attempt under way, unanswered, once its signal aborts (shutdown)', async () => {
    const hooks = await receiver();
    hooks.answer(() => 'hang');
    const { sends, shutdown } = sender();
    const sending = sends.send(claimedDelivery({ url: hooks.url }), new Date());
    await hooks.waitFor(1);
    shutdown.abort();
    expect(await sending).toMatchObject({ statusCode: null, errorType: 'aborted' });
  });

  it('refuses a private address unless allowed, without connecting', async () => {
    const hooks = await receiver();
    const { sends } = sender({ allowPrivateNetworks: false });
    expect(await sends.send(claimedDelivery({ url: hooks.url }), new Date())).toMatchObject({
      statusCode: null,
      error: expect.stringContaining('address not allowed'),
    });
    expect(hooks.received).toHaveLength(0);
  });
});
