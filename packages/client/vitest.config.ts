import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Also run the `*.test-d.ts` type tests on every `vitest run`: vitest's typecheck runs this
    // package's `tsc` (TypeScript 7, the native compiler), which reports failures per assertion.
    typecheck: {
      enabled: true,
      include: ['src/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
  },
});
