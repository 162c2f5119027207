import { useState } from 'preact/hooks';
import { Done, ProblemNotice } from '../components/feedback.js';
import { useAction } from '../components/use-call.js';

/** `2026-11-27T10:00` (a datetime-local field, the browser's time zone) as an RFC 3339 instant. */
function instantOf(local: string): string | undefined {
  if (local === '') return undefined;
  const time = new Date(local);
  if (Number.isNaN(time.getTime())) throw new TypeError(`${local} is no date and time`);
  return time.toISOString();
}

function idOf(text: string, field: string): bigint | undefined {
  if (text.trim() === '') return undefined;
  if (!/^\d{1,19}$/.test(text.trim())) throw new TypeError(`${field} must be a delivery id (digits)`);
  return BigInt(text.trim());
}

/** Queue every failed delivery in a range again, at most 100 a press (the service's bound). */
export function ResendFailed({ webhookId, onResent }: { readonly webhookId: string; readonly onResent: () => void }) {
  const [after, setAfter] = useState('');
  const [through, setThrough] = useState('');
  const [from, setFrom] = useState('');
  const [before, setBefore] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="resend-failed" class="panel">
      <h2 id="resend-failed">Resend failed deliveries</h2>
      <p class="hint">Every failed delivery in the range (all of them when the fields are empty), 100 at a time.</p>
      <form
        class="grid-form"
        onSubmit={async (event) => {
          event.preventDefault();
          setDone(null);
          const ok = await action.run(async (client) => {
            const afterId = idOf(after, 'After delivery id');
            const throughId = idOf(through, 'Up to delivery id');
            const createdFrom = instantOf(from);
            const createdBefore = instantOf(before);
            const range = {
              ...(afterId === undefined ? {} : { after: afterId }),
              ...(throughId === undefined ? {} : { through: throughId }),
              ...(createdFrom === undefined ? {} : { createdFrom }),
              ...(createdBefore === undefined ? {} : { createdBefore }),
            };
            const resent = await client.resendWebhookDeliveries(webhookId, { status: 'failed', ...range });
            setDone(
              resent.resent === 0
                ? 'No failed deliveries in that range.'
                : `Queued ${resent.resent} failed deliver${resent.resent === 1 ? 'y' : 'ies'} again.${
                    resent.hasMore ? ' More failed deliveries remain: press again.' : ''
                  }`,
            );
          });
          if (ok) onResent();
        }}
      >
        <label for="resend-after">After delivery id</label>
        <input id="resend-after" inputMode="numeric" value={after} onInput={(e) => setAfter(e.currentTarget.value)} />
        <label for="resend-through">Up to delivery id</label>
        <input
          id="resend-through"
          inputMode="numeric"
          value={through}
          onInput={(e) => setThrough(e.currentTarget.value)}
        />
        <label for="resend-from">Created from</label>
        <input id="resend-from" type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        <label for="resend-before">Created before</label>
        <input
          id="resend-before"
          type="datetime-local"
          value={before}
          onInput={(e) => setBefore(e.currentTarget.value)}
        />
        <button type="submit" disabled={action.busy}>
          Resend failed
        </button>
      </form>
      <ProblemNotice problem={action.problem} />
      <Done message={done} />
    </section>
  );
}
