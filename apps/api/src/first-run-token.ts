import { commandLineActor, type Database } from '@plant-store/db';
import { DEFAULT_TEAM, SCOPES } from '@plant-store/schema';

export const FIRST_RUN_TOKEN_NAME = 'local-dev';

/**
 * Local first run: an embedded database without any token gets one with every scope
 * (`webhooks:manage` included: it is a developer's own machine), printed once so that a fresh
 * clone can be called at once. Never with PostgreSQL or in production: there, tokens come from
 * `pnpm run token create` only.
 */
export async function issueFirstRunToken(
  db: Pick<Database, 'engine' | 'countTokens' | 'issueToken'>,
  options: { readonly production: boolean; readonly baseUrl: string; readonly print: (text: string) => void },
): Promise<boolean> {
  if (db.engine !== 'pglite' || options.production) return false;
  if ((await db.countTokens()) > 0) return false;
  const { token } = await db.issueToken({
    name: FIRST_RUN_TOKEN_NAME,
    team: DEFAULT_TEAM,
    scopes: SCOPES,
    // Issued by the service itself at its first start, as the command line would.
    actor: commandLineActor('first-run'),
  });
  const rule = '='.repeat(72);
  options.print(
    [
      rule,
      `First start on an empty embedded database: issued the bearer token "${FIRST_RUN_TOKEN_NAME}" (team "${DEFAULT_TEAM}")`,
      `with scopes ${SCOPES.join(' ')}. It is shown this once only; keep it:`,
      '',
      `  PLANT_STORE_TOKEN=${token}`,
      '',
      'Try it:',
      `  curl -X POST ${options.baseUrl}/plants -H "Authorization: Bearer ${token}" \\`,
      `       -H 'Content-Type: application/json' -d '{"id": 1, "name": "Monstera", "tag": "aroid"}'`,
      'More tokens: POST /tokens with this one (docs/tokens.md), or, with the service stopped,',
      '  npx --yes pnpm@10.34.9 run token create --name NAME --scope plants:write',
      rule,
      '',
    ].join('\n'),
  );
  return true;
}
