import type { CreatedWebhook } from '@plant-store/client';
import { DEFAULT_WEBHOOK_EVENT_TYPES } from '@plant-store/schema';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { EventTypesField, type WebhookEventType } from '../components/event-types-field.js';
import { Done, Empty, Loading, ProblemNotice } from '../components/feedback.js';
import { useAction, useLoad } from '../components/use-call.js';
import {
  ChangeWebhook,
  DeliveriesLink,
  eventTypesOf,
  RotateSecret,
  SendTest,
  ToggleEnabled,
  type WebhookActionProps,
} from './webhook-actions.js';

/**
 * What can be done to one subscription, one button each: its deliveries, change it, rotate its
 * secret, send a test event, disable or enable it, delete it.
 */
const WEBHOOK_ACTIONS: ReadonlyArray<{
  readonly name: string;
  readonly render: (props: WebhookActionProps) => ComponentChildren;
}> = [
  { name: 'deliveries', render: (props) => <DeliveriesLink {...props} /> },
  { name: 'test', render: (props) => <SendTest {...props} /> },
  { name: 'enabled', render: (props) => <ToggleEnabled {...props} /> },
  { name: 'change', render: (props) => <ChangeWebhook key={props.webhook.id} {...props} /> },
  { name: 'rotate', render: (props) => <RotateSecret {...props} /> },
  {
    name: 'delete',
    render: ({ webhook, action, onChanged }) => (
      <ConfirmButton
        label="Delete"
        confirmLabel="Confirm delete"
        what={`webhook ${webhook.url}`}
        busy={action.busy}
        onConfirm={() => action.run((client) => client.deleteWebhook(webhook.id)).then((ok) => ok && onChanged())}
      />
    ),
  },
];

/** The team's subscriptions: list, register (the secret shown once), change, rotate, test, disable, delete. */
export function WebhooksScreen() {
  const listing = useLoad((client, signal) => client.listWebhooks({ signal }), 'webhooks');
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <h1>Webhooks</h1>
      <CreateWebhook onCreated={listing.reload} />
      <section aria-labelledby="webhook-list">
        <h2 id="webhook-list">Subscriptions</h2>
        <ProblemNotice problem={action.problem} />
        <Done message={done} />
        {listing.state === 'loading' && <Loading what="subscriptions" />}
        {listing.state === 'failed' && <ProblemNotice problem={listing.problem} />}
        {listing.state === 'ready' &&
          (listing.value.length === 0 ? (
            <Empty>No subscriptions yet: register a receiver above.</Empty>
          ) : (
            <ul class="cards">
              {listing.value.map((webhook) => (
                <li key={webhook.id} class="card">
                  <p class="url">{webhook.url}</p>
                  {webhook.description !== undefined && <p>{webhook.description}</p>}
                  <p data-testid="webhook-state">
                    {webhook.enabled === false ? (
                      <strong class="disabled">
                        Disabled
                        {webhook.disabledAt === undefined
                          ? ''
                          : ` since ${new Date(webhook.disabledAt).toLocaleString()}`}
                        {webhook.disabledReason === undefined ? '' : `: ${webhook.disabledReason}`}
                      </strong>
                    ) : (
                      'Enabled'
                    )}{' '}
                    · events: {eventTypesOf(webhook).join(', ')}
                  </p>
                  <p class="meta">
                    Team {webhook.team} · since {new Date(webhook.createdAt).toLocaleString()} · id{' '}
                    <span class="id">{webhook.id}</span>
                  </p>
                  <div class="actions">
                    {WEBHOOK_ACTIONS.map(({ name, render }) => (
                      <span key={name}>{render({ webhook, action, onChanged: listing.reload, onDone: setDone })}</span>
                    ))}
                  </div>
                </li>
              ))}
            </ul>
          ))}
      </section>
    </>
  );
}

function CreateWebhook({ onCreated }: { readonly onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [eventTypes, setEventTypes] = useState<WebhookEventType[]>([...DEFAULT_WEBHOOK_EVENT_TYPES]);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="create-webhook" class="panel">
      <h2 id="create-webhook">Register a receiver</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setCreated(null);
          const ok = await action.run(async (client) => {
            setCreated(await client.createWebhook({ url, eventTypes, ...(description === '' ? {} : { description }) }));
          });
          if (ok) {
            setUrl('');
            setDescription('');
            onCreated();
          }
        }}
      >
        <label for="webhook-url">Receiver URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          placeholder="https://hooks.example.com/plants"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
        />
        <label for="webhook-description">Description (optional)</label>
        <input id="webhook-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <EventTypesField value={eventTypes} onChange={setEventTypes} />
        <button type="submit" disabled={action.busy}>
          Register
        </button>
      </form>
      <ProblemNotice problem={action.problem} />
      {created !== null && (
        <div class="secret" role="status">
          <p>
            Registered {created.url}. Its signing secret is shown <strong>this once only</strong>: keep it to verify
            signatures.
          </p>
          <code data-testid="webhook-secret">{created.secret}</code>
          <CopyButton text={created.secret} label="Copy secret" />
        </div>
      )}
      <Done message={null} />
    </section>
  );
}
