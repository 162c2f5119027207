import type { DeliveryStatus, WebhookDelivery, WebhookDeliveryAttempt } from '@plant-store/client';
import { useState } from 'preact/hooks';
import { Done, Empty, Loading, ProblemNotice } from '../components/feedback.js';
import { Pager } from '../components/pager.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useAction, useLoad } from '../components/use-call.js';
import { usePages } from '../components/use-pages.js';
import { hrefOf } from '../route.js';
import { ResendFailed } from './resend-failed.js';

const PAGE_SIZE = 20;
const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/** One subscription's deliveries, each with its attempts: filtered by status, paged, resent. */
export function DeliveriesScreen({ webhookId }: { readonly webhookId: string }) {
  const [status, setStatus] = useState<DeliveryStatus | undefined>(undefined);
  const pages = usePages<bigint>();
  const listing = useLoad(
    (client, signal) =>
      client.listWebhookDeliveries(
        webhookId,
        {
          limit: PAGE_SIZE,
          ...(status === undefined ? {} : { status }),
          ...(pages.after === undefined ? {} : { after: pages.after }),
        },
        { signal },
      ),
    `${webhookId}|${status ?? ''}|${pages.after ?? ''}`,
  );
  const resend = useAction();
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <h1>Deliveries</h1>
      <p>
        <a href={hrefOf('webhooks')}>Back to webhooks</a> · subscription <span class="id">{webhookId}</span>
      </p>
      <ResendFailed webhookId={webhookId} onResent={listing.reload} />
      <section aria-labelledby="delivery-list">
        <h2 id="delivery-list">Every delivery</h2>
        <form class="inline-form" onSubmit={(event) => event.preventDefault()}>
          <label for="status-filter">Status</label>
          <select
            id="status-filter"
            value={status ?? ''}
            onChange={(event) => {
              const value = event.currentTarget.value;
              setStatus(STATUSES.find((known) => known === value));
              pages.reset();
            }}
          >
            <option value="">all</option>
            {STATUSES.map((known) => (
              <option key={known} value={known}>
                {known}
              </option>
            ))}
          </select>
          <button type="button" onClick={listing.reload}>
            Refresh
          </button>
        </form>
        <ProblemNotice problem={resend.problem} />
        <Done message={done} />
        {listing.state === 'loading' && <Loading what="deliveries" />}
        {listing.state === 'failed' && <ProblemNotice problem={listing.problem} />}
        {listing.state === 'ready' && (
          <>
            {listing.value.deliveries.length === 0 ? (
              <Empty>{status === undefined ? 'No deliveries yet.' : `No ${status} deliveries.`}</Empty>
            ) : (
              <ul class="cards">
                {listing.value.deliveries.map((delivery) => (
                  <DeliveryCard
                    key={String(delivery.id)}
                    delivery={delivery}
                    busy={resend.busy}
                    onResend={async () => {
                      setDone(null);
                      const ok = await resend.run(async (client) => {
                        await client.resendWebhookDelivery(webhookId, delivery.id);
                      });
                      if (ok) {
                        setDone(`Delivery ${delivery.id} queued again.`);
                        listing.reload();
                      }
                    }}
                  />
                ))}
              </ul>
            )}
            <Pager
              label="Delivery pages"
              page={pages.page}
              hasPrevious={pages.hasPrevious}
              hasNext={listing.value.next !== null}
              onPrevious={pages.previous}
              onNext={() => {
                const after = listing.value.next?.after;
                if (after !== undefined) pages.next(after);
              }}
            />
          </>
        )}
      </section>
    </>
  );
}

function DeliveryCard(props: {
  readonly delivery: WebhookDelivery;
  readonly busy: boolean;
  readonly onResend: () => void;
}) {
  const { delivery } = props;
  return (
    <li class="card" data-testid="delivery">
      <p>
        <span class={`status status-${delivery.status}`}>{delivery.status}</span> Delivery{' '}
        <span class="id">{String(delivery.id)}</span> of plant <span class="id">{String(delivery.plantId)}</span>
      </p>
      <p class="meta">
        Created {new Date(delivery.createdAt).toLocaleString()}
        {delivery.nextAttemptAt !== undefined && ` · next attempt ${new Date(delivery.nextAttemptAt).toLocaleString()}`}
        {delivery.deliveredAt !== undefined && ` · delivered ${new Date(delivery.deliveredAt).toLocaleString()}`}
        {` · ${delivery.attempts.length} attempt${delivery.attempts.length === 1 ? '' : 's'}`}
      </p>
      {delivery.attempts.length > 0 && <Attempts attempts={delivery.attempts} id={delivery.id} />}
      <div class="actions">
        <button
          type="button"
          disabled={props.busy}
          onClick={props.onResend}
          aria-label={`Resend delivery ${delivery.id}`}
        >
          Resend
        </button>
      </div>
    </li>
  );
}

function Attempts({ attempts, id }: { readonly attempts: readonly WebhookDeliveryAttempt[]; readonly id: bigint }) {
  return (
    <ScrollRegion label={`Attempts of delivery ${id}`}>
      <table>
        <caption class="visually-hidden">Attempts of delivery {String(id)}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Answer or error</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((attempt) => (
            <tr key={attempt.attemptedAt}>
              <td>{new Date(attempt.attemptedAt).toLocaleString()}</td>
              <td>{attempt.statusCode ?? 'none'}</td>
              <td>{attempt.latencyMs} ms</td>
              <td>
                {attempt.error !== undefined && <span class="error-text">{attempt.error}</span>}
                {attempt.responseExcerpt !== undefined && <pre class="excerpt">{attempt.responseExcerpt}</pre>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
