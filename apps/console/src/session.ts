/**
 * The bearer token, kept in this tab's sessionStorage only: never a cookie, never localStorage,
 * never in a URL. Closing the tab or signing out forgets it.
 */
const TOKEN_KEY = 'plant-store-console.token';

export function readToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function keepToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}
