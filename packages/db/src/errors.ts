/**
 * Domain errors of the data layer. Prisma and driver errors are translated into these here,
 * and nowhere else: callers never see an ORM type.
 */
export class PlantConflictError extends Error {
  override readonly name = 'PlantConflictError';
  constructor(readonly id: bigint) {
    super(`a plant with id ${id} already exists with a different name or tag`);
  }
}

/** The database cannot be reached or stopped answering: a server-side fault, worth a retry. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  constructor(options?: { cause?: unknown }) {
    super('the database is unavailable', options);
  }
}

/** Another process holds the embedded database's data folder. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(readonly dataDir: string) {
    super(
      `the data folder ${dataDir} is in use by another Plant Store process; stop that process first, or set DATA_DIR to another folder`,
    );
  }
}

export class TokenNameTakenError extends Error {
  override readonly name = 'TokenNameTakenError';
  constructor(readonly tokenName: string) {
    super(
      `a token named "${tokenName}" already exists or existed, ignoring case (the names of revoked tokens are not reused)`,
    );
  }
}

export class TokenNotFoundError extends Error {
  override readonly name = 'TokenNotFoundError';
  constructor(readonly tokenName: string) {
    super(`no active token is named "${tokenName}"`);
  }
}

/** Creating another webhook subscription would pass its team's cap (WEBHOOK_LIMIT by default). */
export class WebhookLimitError extends Error {
  override readonly name = 'WebhookLimitError';
  constructor(
    readonly limit: number,
    readonly team?: string,
  ) {
    super(
      team === undefined
        ? `at most ${limit} webhooks may be registered; delete one first`
        : `team "${team}" has ${limit} webhooks registered, its limit; delete one first`,
    );
  }
}

/** The database lacks migrations this build needs, and this process was told not to apply them. */
export class MigrationsPendingError extends Error {
  override readonly name = 'MigrationsPendingError';
  constructor(readonly pending: readonly string[]) {
    super(
      `the database schema is not up to date: ${pending.length} migration${pending.length === 1 ? ' is' : 's are'} not applied (${pending.join(', ')})`,
    );
  }
}

/** Issuing another token would pass its team's cap on active tokens. */
export class TokenLimitError extends Error {
  override readonly name = 'TokenLimitError';
  constructor(
    readonly team: string,
    readonly limit: number,
  ) {
    super(`team "${team}" holds ${limit} active tokens already, its limit; revoke one first`);
  }
}

/** Why an import was refused: the rule a line broke (see ImportRejectedError). */
export type ImportRule = 'repeated-id' | 'stored-conflict';

/**
 * An import refused because of one of its lines: nothing of it was stored. `line` is the
 * 1-based line number in the stream; for a repeated id, `firstLine` is the earlier line.
 */
export class ImportRejectedError extends Error {
  override readonly name = 'ImportRejectedError';
  private constructor(
    readonly line: number,
    readonly rule: ImportRule,
    message: string,
    readonly firstLine?: number,
  ) {
    super(message);
  }

  static repeatedId(line: number, firstLine: number, id: bigint): ImportRejectedError {
    return new ImportRejectedError(
      line,
      'repeated-id',
      `line ${line}: id ${id} is repeated from line ${firstLine} with another name or tag`,
      firstLine,
    );
  }

  static storedConflict(line: number, id: bigint): ImportRejectedError {
    return new ImportRejectedError(
      line,
      'stored-conflict',
      `line ${line}: a plant with id ${id} already exists with a different name or tag`,
    );
  }
}
