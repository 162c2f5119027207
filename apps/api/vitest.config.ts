import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Also run the `*.test-d.ts` type tests (this package's `tsc`), as the schema and client packages do.
    typecheck: {
      enabled: true,
      include: ['src/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
    // One migrated PGlite folder and PostgreSQL database, made once, copied by every suite that
    // does not test migrating itself (createTestStorage(engine, { migrated: true })).
    globalSetup: ['src/test-support/global-setup.ts'],
    // Two files at a time: most of a suite's time is spent waiting (processes, sockets, the
    // database), and a PGlite instance takes a few hundred MB, so two fit beside turbo's others.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
