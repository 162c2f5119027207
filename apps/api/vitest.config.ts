import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The bench's own tests too (its Fastify reference against a real database).
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts'],
    // Also run the `*.test-d.ts` type tests (this package's `tsc`), as the schema and client packages do.
    typecheck: {
      enabled: true,
      include: ['src/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
    // One migrated PGlite folder and PostgreSQL database, made once, copied by every suite that
    // does not test migrating itself (createTestStorage(engine, { migrated: true })).
    globalSetup: ['src/test-support/global-setup.ts'],
    // Three files at a time on two cores: most of a suite's time is spent waiting (child
    // processes starting, sockets, the database), so a third file fills the gaps (the whole test
    // command measured 3m15s with two, 2m43s with three, beside turbo's other suites); a PGlite
    // instance takes a few hundred MB, and three fit.
    fileParallelism: true,
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
