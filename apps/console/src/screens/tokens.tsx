import type { CreatedToken, Token } from '@plant-store/client';
import { SCOPES, type Scope } from '@plant-store/schema';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { Done, Empty, Loading, ProblemNotice } from '../components/feedback.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useAction, useLoad } from '../components/use-call.js';
import { AuditLog } from './audit-log.js';

/** The team's tokens (with tokens:manage): list, issue (the token shown once), revoke; and the audit log. */
export function TokensScreen() {
  const listing = useLoad((client, signal) => client.listTokens({ signal }), 'tokens');
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  // Each issue and revocation: the list and the audit log are read again.
  const [changes, setChanges] = useState(0);
  const changed = () => {
    setChanges((count) => count + 1);
    listing.reload();
  };
  return (
    <>
      <h1>Tokens</h1>
      <IssueToken onIssued={changed} />
      <section aria-labelledby="token-list">
        <h2 id="token-list">Active tokens</h2>
        <ProblemNotice problem={action.problem} />
        <Done message={done} />
        {listing.state === 'loading' && <Loading what="tokens" />}
        {listing.state === 'failed' && <ProblemNotice problem={listing.problem} />}
        {listing.state === 'ready' &&
          (listing.value.length === 0 ? (
            <Empty>No active tokens.</Empty>
          ) : (
            <TokenTable
              tokens={listing.value}
              busy={action.busy}
              onRevoke={async (name) => {
                setDone(null);
                if (await action.run((client) => client.revokeToken(name))) {
                  setDone(`Revoked ${name}.`);
                  changed();
                }
              }}
            />
          ))}
      </section>
      <AuditLog changes={changes} />
    </>
  );
}

function TokenTable(props: {
  readonly tokens: readonly Token[];
  readonly busy: boolean;
  readonly onRevoke: (name: string) => void;
}) {
  return (
    <ScrollRegion label="Active tokens">
      <table>
        <caption class="visually-hidden">Active tokens, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.tokens.map((token) => (
            <tr key={token.name}>
              <td>
                {token.name}
                <span class="meta"> ({token.team})</span>
              </td>
              <td>{token.scopes.join(' ')}</td>
              <td>{token.expiresAt === undefined ? 'never' : new Date(token.expiresAt).toLocaleString()}</td>
              <td>{token.lastUsedAt === undefined ? 'not yet' : new Date(token.lastUsedAt).toLocaleString()}</td>
              <td>
                <ConfirmButton
                  label="Revoke"
                  confirmLabel="Confirm revoke"
                  what={`token ${token.name}`}
                  busy={props.busy}
                  onConfirm={() => props.onRevoke(token.name)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function IssueToken({ onIssued }: { readonly onIssued: () => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['plants:read']);
  const [expires, setExpires] = useState('');
  const [issued, setIssued] = useState<CreatedToken | null>(null);
  const action = useAction();
  const toggle = (scope: Scope, on: boolean) =>
    setScopes((held) =>
      on ? SCOPES.filter((known) => known === scope || held.includes(known)) : held.filter((s) => s !== scope),
    );
  return (
    <section aria-labelledby="issue-token" class="panel">
      <h2 id="issue-token">Issue a token</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setIssued(null);
          const ok = await action.run(async (client) => {
            const expiresAt = expires === '' ? undefined : new Date(expires).toISOString();
            setIssued(await client.createToken({ name, scopes, ...(expiresAt === undefined ? {} : { expiresAt }) }));
          });
          if (ok) {
            setName('');
            onIssued();
          }
        }}
      >
        <label for="token-name">Name</label>
        <input id="token-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => toggle(scope, e.currentTarget.checked)}
              />{' '}
              {scope}
            </label>
          ))}
        </fieldset>
        <label for="token-expires">Expires (optional)</label>
        <input
          id="token-expires"
          type="datetime-local"
          value={expires}
          onInput={(e) => setExpires(e.currentTarget.value)}
        />
        <button type="submit" disabled={action.busy}>
          Issue token
        </button>
      </form>
      <ProblemNotice problem={action.problem} />
      {issued !== null && (
        <div class="secret" role="status">
          <p>
            Issued {issued.name}. The token is shown <strong>this once only</strong>: the service keeps only its hash.
          </p>
          <code data-testid="issued-token">{issued.token}</code>
          <CopyButton text={issued.token} label="Copy token" />
        </div>
      )}
    </section>
  );
}
