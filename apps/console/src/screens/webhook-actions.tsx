import type { RotatedWebhookSecret, Webhook } from '@plant-store/client';
import {
  DEFAULT_WEBHOOK_EVENT_TYPES,
  SECRET_GRACE_PERIOD_DEFAULT_SECONDS,
  SECRET_GRACE_PERIOD_MAX_SECONDS,
  WEBHOOK_EVENT_TYPES,
} from '@plant-store/schema';
import { useState } from 'preact/hooks';
import { CopyButton } from '../components/copy-button.js';
import { EventTypesField, type WebhookEventType } from '../components/event-types-field.js';
import type { Action } from '../components/use-call.js';
import { hrefOf } from '../route.js';

export interface WebhookActionProps {
  readonly webhook: Webhook;
  readonly action: Action;
  /** Call after a change, to list the subscriptions again. */
  readonly onChanged: () => void;
  /** Says what was done (announced politely). */
  readonly onDone: (message: string) => void;
}

/** Change its URL, description and event types (`PATCH /webhooks/{id}`). */
export function ChangeWebhook({ webhook, action, onChanged, onDone }: WebhookActionProps) {
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState(webhook.url);
  const [description, setDescription] = useState(webhook.description ?? '');
  const [eventTypes, setEventTypes] = useState<WebhookEventType[]>(() => eventTypesOf(webhook));
  if (!open) {
    return (
      <button type="button" aria-label={`Change webhook ${webhook.url}`} onClick={() => setOpen(true)}>
        Change
      </button>
    );
  }
  const prefix = `change-${webhook.id}`;
  return (
    <form
      class="grid-form panel"
      aria-label={`Change webhook ${webhook.url}`}
      onSubmit={async (event) => {
        event.preventDefault();
        const ok = await action.run(async (client) => {
          await client.updateWebhook(webhook.id, {
            url,
            description: description === '' ? null : description,
            eventTypes,
          });
        });
        if (ok) {
          setOpen(false);
          onDone(`Changed ${url}.`);
          onChanged();
        }
      }}
    >
      <label for={`${prefix}-url`}>New receiver URL</label>
      <input id={`${prefix}-url`} type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <label for={`${prefix}-description`}>New description</label>
      <input id={`${prefix}-description`} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <EventTypesField value={eventTypes} onChange={setEventTypes} />
      <span class="actions">
        <button type="submit" disabled={action.busy}>
          Save changes
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </span>
    </form>
  );
}

/** A new signing secret (shown this once, with a copy button); the previous one signs beside it for a while. */
export function RotateSecret({ webhook, action, onDone }: WebhookActionProps) {
  const [open, setOpen] = useState(false);
  const [grace, setGrace] = useState(String(SECRET_GRACE_PERIOD_DEFAULT_SECONDS));
  const [rotated, setRotated] = useState<RotatedWebhookSecret | null>(null);
  if (rotated !== null) {
    return (
      <div class="secret" role="status">
        <p>
          New signing secret for {webhook.url}, shown <strong>this once only</strong>
          {rotated.previousSecretExpiresAt === undefined
            ? ': the previous one stopped at once.'
            : `: the previous one signs too until ${new Date(rotated.previousSecretExpiresAt).toLocaleString()}.`}
        </p>
        <code data-testid="rotated-secret">{rotated.secret}</code>
        <CopyButton text={rotated.secret} label="Copy new secret" />
        <button type="button" onClick={() => setRotated(null)}>
          Hide secret
        </button>
      </div>
    );
  }
  if (!open) {
    return (
      <button type="button" aria-label={`Rotate secret of ${webhook.url}`} onClick={() => setOpen(true)}>
        Rotate secret
      </button>
    );
  }
  const id = `grace-${webhook.id}`;
  return (
    <form
      class="inline-form"
      aria-label={`Rotate secret of ${webhook.url}`}
      onSubmit={async (event) => {
        event.preventDefault();
        const ok = await action.run(async (client) => {
          setRotated(await client.rotateWebhookSecret(webhook.id, { gracePeriodSeconds: Number(grace) }));
        });
        if (ok) {
          setOpen(false);
          onDone(`Rotated the secret of ${webhook.url}.`);
        }
      }}
    >
      <label for={id}>Grace period (seconds)</label>
      <input
        id={id}
        type="number"
        min={0}
        max={SECRET_GRACE_PERIOD_MAX_SECONDS}
        step={1}
        required
        value={grace}
        onInput={(e) => setGrace(e.currentTarget.value)}
      />
      <button type="submit" disabled={action.busy}>
        Rotate now
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}

/** Queues a `webhook.test` delivery; it shows in the subscription's deliveries. */
export function SendTest({ webhook, action, onDone }: WebhookActionProps) {
  return (
    <button
      type="button"
      aria-label={`Send test event to ${webhook.url}`}
      disabled={action.busy}
      onClick={() =>
        action.run(async (client) => {
          const delivery = await client.sendWebhookTest(webhook.id);
          onDone(`Test event queued as delivery ${delivery.id}: see Deliveries.`);
        })
      }
    >
      Send test
    </button>
  );
}

/** Disable (it gets no new events) or enable again. */
export function ToggleEnabled({ webhook, action, onChanged, onDone }: WebhookActionProps) {
  const enabled = webhook.enabled !== false;
  return (
    <button
      type="button"
      aria-label={`${enabled ? 'Disable' : 'Enable'} webhook ${webhook.url}`}
      disabled={action.busy}
      onClick={() =>
        action
          .run(async (client) => {
            await client.updateWebhook(webhook.id, { enabled: !enabled });
          })
          .then((ok) => {
            if (!ok) return;
            onDone(`${enabled ? 'Disabled' : 'Enabled'} ${webhook.url}.`);
            onChanged();
          })
      }
    >
      {enabled ? 'Disable' : 'Enable'}
    </button>
  );
}

export function DeliveriesLink({ webhook }: WebhookActionProps) {
  return (
    <a class="button" href={hrefOf('webhooks', webhook.id)} aria-label={`Deliveries of ${webhook.url}`}>
      Deliveries
    </a>
  );
}

/** Its event types (a service before event types sends none: it sends plant.created only). */
export function eventTypesOf(webhook: Webhook): WebhookEventType[] {
  const types: readonly string[] = webhook.eventTypes ?? DEFAULT_WEBHOOK_EVENT_TYPES;
  return WEBHOOK_EVENT_TYPES.filter((type) => types.includes(type));
}
