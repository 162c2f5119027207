import { provideMigratedTemplates } from '@plant-store/db/testing';

/** vitest globalSetup: one migrated PGlite folder and PostgreSQL database for every test file to copy. */
export default function setup(): Promise<() => Promise<void>> {
  return provideMigratedTemplates();
}
