import { Empty, Loading, ProblemNotice } from '../components/feedback.js';
import { Pager } from '../components/pager.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useLoad } from '../components/use-call.js';
import { usePages } from '../components/use-pages.js';

const PAGE_SIZE = 20;

/** The team's audit log, oldest first, a page at a time; read again whenever `changes` moves on. */
export function AuditLog({ changes }: { readonly changes: number }) {
  const pages = usePages<bigint>();
  const listing = useLoad(
    (client, signal) =>
      client.listAuditEvents(
        { limit: PAGE_SIZE, ...(pages.after === undefined ? {} : { after: pages.after }) },
        { signal },
      ),
    `${changes}|${pages.after ?? ''}`,
  );
  return (
    <section aria-labelledby="audit-log">
      <h2 id="audit-log">Audit log</h2>
      <button type="button" onClick={listing.reload}>
        Refresh the log
      </button>
      {listing.state === 'loading' && <Loading what="the audit log" />}
      {listing.state === 'failed' && <ProblemNotice problem={listing.problem} />}
      {listing.state === 'ready' && (
        <>
          {listing.value.events.length === 0 ? (
            <Empty>Nothing recorded yet.</Empty>
          ) : (
            <ScrollRegion label="Audit events">
              <table>
                <caption class="visually-hidden">Audit events, oldest first</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">What</th>
                    <th scope="col">On</th>
                    <th scope="col">From</th>
                  </tr>
                </thead>
                <tbody>
                  {listing.value.events.map((event) => (
                    <tr key={String(event.id)}>
                      <td>{new Date(event.occurredAt).toLocaleString()}</td>
                      <td>
                        {event.actor.name}
                        <span class="meta"> ({event.actor.kind})</span>
                      </td>
                      <td>{event.action}</td>
                      <td class="id">{event.target}</td>
                      <td>{event.clientAddress ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollRegion>
          )}
          <Pager
            label="Audit log pages"
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
  );
}
