import { provideMigratedTemplates } from '../testing.js';

/** vitest globalSetup: one migrated PGlite folder and PostgreSQL database for every test file to copy. */
export default function setup(): Promise<() => Promise<void>> {
  return provideMigratedTemplates();
}
