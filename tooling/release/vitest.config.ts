import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // The consumer test packs, installs from the npm registry (or its cache) and starts the service.
    testTimeout: 60_000,
    hookTimeout: 240_000,
  },
});
