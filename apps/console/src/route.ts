import { useEffect, useState } from 'preact/hooks';

/** Where in the console: the part of the URL after `#/`, split at `/` (never sent to the service). */
export type Route = readonly string[];

function currentRoute(): Route {
  const hash = window.location.hash.replace(/^#\/?/, '');
  return hash === '' ? ['plants'] : hash.split('/').map((part) => decodeURIComponent(part));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}

/** The link to a place in the console. */
export function hrefOf(...parts: string[]): string {
  return `#/${parts.map((part) => encodeURIComponent(part)).join('/')}`;
}

export function navigate(...parts: string[]): void {
  window.location.hash = hrefOf(...parts).slice(1);
}
