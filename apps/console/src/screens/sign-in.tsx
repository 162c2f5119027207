import { useState } from 'preact/hooks';

/**
 * Asks for a bearer token. It is kept in this tab's sessionStorage only, and sent to this
 * service only. `reason` says why the last one stopped working (expired, revoked).
 */
export function SignInScreen(props: { readonly reason: string | null; readonly onSignIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [invalid, setInvalid] = useState(false);
  return (
    <main id="main" class="sign-in">
      <h1>Plant Store console</h1>
      {props.reason !== null && (
        <p class="notice notice-expired" role="alert">
          Your token was refused: {props.reason} Sign in with a new token.
        </p>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const trimmed = token.trim();
          const ok = /^[A-Za-z0-9\-._~+/]+=*$/.test(trimmed);
          setInvalid(!ok);
          if (ok) props.onSignIn(trimmed);
        }}
      >
        <label for="token">Bearer token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          aria-invalid={invalid}
          aria-describedby="token-help"
          onInput={(event) => setToken(event.currentTarget.value)}
        />
        <p id="token-help" class="hint">
          A token of your team (<code>pst_…</code>). It stays in this browser tab only, and is forgotten when you sign
          out or close the tab. What you can do is what its scopes allow.
        </p>
        {invalid && (
          <p class="notice" role="alert">
            That is not a bearer token.
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
