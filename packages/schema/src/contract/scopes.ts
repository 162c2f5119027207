/**
 * What a bearer token may do, each scope with what it grants. `webhooks:manage` decides where
 * the service sends requests, and `tokens:manage` can issue a token with any scope, so no token
 * gets either unasked.
 */
export const SCOPE_DESCRIPTIONS = {
  'plants:read': 'list and fetch plants',
  'plants:write': 'create and delete plants',
  'webhooks:manage': 'register, list and delete webhooks; list and resend their deliveries',
  'tokens:manage': 'issue, list and revoke bearer tokens (any scope: it is an administrator scope)',
} as const;
export type Scope = keyof typeof SCOPE_DESCRIPTIONS;

/** Every scope, in the order written above. */
export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as readonly Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPE_DESCRIPTIONS, value);
}
