import { defineConfig } from 'prisma/config';

// Only `prisma generate` reads this file: migrations are applied by `src/migrate.ts`
// through Prisma's WASM schema engine (the CLI's native engine cannot be downloaded here).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
