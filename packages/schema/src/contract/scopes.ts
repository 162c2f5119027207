/**
 * What a bearer token may do, each scope with what it grants. Every token belongs to a team, and
 * the manage scopes reach that team's tokens and subscriptions only; `platform:admin` lifts that
 * wall. `webhooks:manage` decides where the service sends requests, and `tokens:manage` issues
 * tokens, so no token gets either unasked.
 */
export const SCOPE_DESCRIPTIONS = {
  'plants:read': 'list and fetch plants',
  'plants:write': 'create and delete plants',
  'webhooks:manage':
    "register (with plants:read too), list and delete its team's webhooks; list and resend their deliveries",
  'tokens:manage':
    "issue, list and revoke its team's bearer tokens, granting only scopes it holds, within the platform's limits; read its team's audit log",
  'platform:admin':
    "the platform operator's: with tokens:manage and webhooks:manage, every team's tokens, subscriptions and audit log, and tokens for any team",
} as const;
export type Scope = keyof typeof SCOPE_DESCRIPTIONS;

/** Every scope, in the order written above. */
export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as readonly Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_DESCRIPTIONS, value);
}
