/** A token as everyone but its holder sees it: never the token, never its hash. */
export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

export const tokenRecordSelect = {
  id: true,
  name: true,
  scopes: true,
  createdAt: true,
  revokedAt: true,
} as const;
