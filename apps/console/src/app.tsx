import { useCallback, useMemo, useState } from 'preact/hooks';
import { clientFor } from './api.js';
import { ConsoleContext } from './components/console-context.js';
import { HealthStrip } from './components/health-strip.js';
import { hrefOf, type Route, useRoute } from './route.js';
import { DeliveriesScreen } from './screens/deliveries.js';
import { PlantDetailScreen } from './screens/plant-detail.js';
import { PlantsScreen } from './screens/plants.js';
import { SignInScreen } from './screens/sign-in.js';
import { TokensScreen } from './screens/tokens.js';
import { WebhooksScreen } from './screens/webhooks.js';
import { forgetToken, keepToken, readToken } from './session.js';

const SECTIONS = [
  ['plants', 'Plants'],
  ['webhooks', 'Webhooks'],
  ['tokens', 'Tokens'],
] as const;

export function App() {
  const [token, setToken] = useState(readToken);
  const [refusal, setRefusal] = useState<string | null>(null);
  const signIn = (next: string) => {
    keepToken(next);
    setRefusal(null);
    setToken(next);
  };
  const signOut = useCallback((reason: string | null) => {
    forgetToken();
    setRefusal(reason);
    setToken(null);
  }, []);
  if (token === null) return <SignInScreen reason={refusal} onSignIn={signIn} />;
  return <SignedIn token={token} onSignOut={signOut} />;
}

function SignedIn({
  token,
  onSignOut,
}: {
  readonly token: string;
  readonly onSignOut: (reason: string | null) => void;
}) {
  const client = useMemo(() => clientFor(token), [token]);
  const context = useMemo(
    () => ({ client, onTokenRefused: (message: string) => onSignOut(message) }),
    [client, onSignOut],
  );
  const route = useRoute();
  return (
    <ConsoleContext.Provider value={context}>
      {/* A button, not a link to #main: the hash is the console's route. */}
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">Plant Store</span>
        <nav aria-label="Sections">
          {SECTIONS.map(([section, label]) => (
            <a key={section} href={hrefOf(section)} aria-current={route[0] === section ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <button type="button" onClick={() => onSignOut(null)}>
          Sign out
        </button>
      </header>
      <HealthStrip client={client} />
      <main id="main" tabIndex={-1}>
        <Screen route={route} />
      </main>
    </ConsoleContext.Provider>
  );
}

function Screen({ route }: { readonly route: Route }) {
  const [section, id] = route;
  if (section === 'plants') return id === undefined ? <PlantsScreen /> : <PlantDetailScreen idText={id} />;
  if (section === 'webhooks') return id === undefined ? <WebhooksScreen /> : <DeliveriesScreen webhookId={id} />;
  if (section === 'tokens') return <TokensScreen />;
  return (
    <>
      <h1>Not found</h1>
      <p>
        The console has no page here. <a href={hrefOf('plants')}>Go to plants</a>.
      </p>
    </>
  );
}
