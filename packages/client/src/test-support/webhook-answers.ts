/** Exact JSON texts of webhook answers, as the service writes them. */

export const WEBHOOK_ID = '0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10';
export const OTHER_WEBHOOK_ID = '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
export const CREATED_AT = '2026-11-23T10:48:07.123Z';
export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4Z5mCrxNB9o=';

export function webhookText(fields: { id?: string; url?: string; description?: string; secret?: string } = {}): string {
  const { id = WEBHOOK_ID, url = 'https://hooks.example.com/plants', description, secret } = fields;
  return (
    `{"id":"${id}","url":${JSON.stringify(url)}` +
    (description === undefined ? '' : `,"description":${JSON.stringify(description)}`) +
    `,"team":"inventory","createdAt":"${CREATED_AT}"` +
    (secret === undefined ? '' : `,"secret":"${secret}"`) +
    '}'
  );
}

/** A pending delivery without attempts; `id` and `plantId` written exactly. */
export function deliveryText(id: bigint, fields: { webhookId?: string; plantId?: bigint } = {}): string {
  const { webhookId = WEBHOOK_ID, plantId = 9007199254740993n } = fields;
  return (
    `{"id":${id},"webhookId":"${webhookId}","eventId":"msg_5b1d0c8e-2f6a-4d39-8d2e-93f0b7c1a4e2",` +
    `"plantId":${plantId},"status":"pending","nextAttemptAt":"${CREATED_AT}","createdAt":"${CREATED_AT}","attempts":[]}`
  );
}
