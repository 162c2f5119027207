import type { CreatedWebhook, Webhook } from '@plant-store/client';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { Done, Empty, Loading, ProblemNotice } from '../components/feedback.js';
import { type Action, useAction, useLoad } from '../components/use-call.js';
import { hrefOf } from '../route.js';

/**
 * What can be done to one subscription, one button each. Today: its deliveries and delete. Change,
 * rotate the secret, send a test and enable/disable are added here once the API has them.
 */
export interface WebhookActionProps {
  readonly webhook: Webhook;
  readonly action: Action;
  /** Call after a change, to list the subscriptions again. */
  readonly onChanged: () => void;
}

const WEBHOOK_ACTIONS: ReadonlyArray<{
  readonly name: string;
  readonly render: (props: WebhookActionProps) => ComponentChildren;
}> = [
  {
    name: 'deliveries',
    render: ({ webhook }) => (
      <a class="button" href={hrefOf('webhooks', webhook.id)} aria-label={`Deliveries of ${webhook.url}`}>
        Deliveries
      </a>
    ),
  },
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

/** The team's subscriptions: list, register (the secret shown once), delete; each one's deliveries. */
export function WebhooksScreen() {
  const listing = useLoad((client, signal) => client.listWebhooks({ signal }), 'webhooks');
  const action = useAction();
  return (
    <>
      <h1>Webhooks</h1>
      <CreateWebhook onCreated={listing.reload} />
      <section aria-labelledby="webhook-list">
        <h2 id="webhook-list">Subscriptions</h2>
        <ProblemNotice problem={action.problem} />
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
                  <p class="meta">
                    Team {webhook.team} · since {new Date(webhook.createdAt).toLocaleString()} · id{' '}
                    <span class="id">{webhook.id}</span>
                  </p>
                  <div class="actions">
                    {WEBHOOK_ACTIONS.map(({ name, render }) => (
                      <span key={name}>{render({ webhook, action, onChanged: listing.reload })}</span>
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
            setCreated(await client.createWebhook({ url, ...(description === '' ? {} : { description }) }));
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
