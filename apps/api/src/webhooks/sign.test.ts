import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signWebhook } from './sign.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const eventId = 'msg_2b9f4bd4-5a53-4a43-9e8a-5c3f1d3f8a11';
const payload = '{"id":9007199254740993,"name":"Monstera","tag":"big"}';

describe('signWebhook', () => {
  it('writes the Standard Webhooks headers, which the reference library verifies', () => {
    const at = new Date();
    const headers = signWebhook([secret], eventId, payload, at);
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'plant-store-webhooks/1',
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // Throws unless the signature matches (jsonParse off: the body is not parsed, only checked).
    expect(() => new Webhook(secret).verify(payload, headers, { jsonParse: false })).not.toThrow();
  });

  it('is refused with another secret, another body or another id', () => {
    const headers = signWebhook([secret], eventId, payload, new Date());
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(other).verify(payload, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(payload.replace('93', '94'), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(payload, { ...headers, 'webhook-id': 'msg_other' })).toThrow(
      WebhookVerificationError,
    );
  });

  it('signs each attempt with its own time, so a late retry is not taken for a replay', () => {
    const first = signWebhook([secret], eventId, payload, new Date(Date.now() - 3 * 3_600_000));
    const retry = signWebhook([secret], eventId, payload, new Date());
    expect(retry['webhook-id']).toBe(first['webhook-id']);
    expect(retry['webhook-signature']).not.toBe(first['webhook-signature']);
    expect(() => new Webhook(secret).verify(payload, first)).toThrow('Message timestamp too old');
    expect(() => new Webhook(secret).verify(payload, retry, { jsonParse: false })).not.toThrow();
  });
});
