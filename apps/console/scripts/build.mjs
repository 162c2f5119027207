// Builds the console into dist/: index.html, assets/console.js (one ES module: the page, Preact,
// the client and the contract) and assets/console.css. Prints each file's size gzipped and fails
// when the first load (all three) passes the budget.
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const FIRST_LOAD_BUDGET_BYTES = 100 * 1024;
const root = new URL('..', import.meta.url);
const dist = new URL('dist/', root);

await rm(dist, { recursive: true, force: true });
await mkdir(new URL('assets/', dist), { recursive: true });
await build({
  absWorkingDir: root.pathname,
  entryPoints: ['src/main.tsx'],
  outfile: 'dist/assets/console.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // BigInt literals and class fields: what every browser of the last three years runs.
  target: ['es2022'],
  minify: true,
  legalComments: 'none',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
});
await copyFile(new URL('src/index.html', root), new URL('index.html', dist));
await copyFile(new URL('src/console.css', root), new URL('assets/console.css', dist));

let total = 0;
for (const file of ['index.html', 'assets/console.js', 'assets/console.css']) {
  const bytes = await readFile(new URL(file, dist));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  total += gzipped;
  console.log(`console ${file}: ${(bytes.length / 1024).toFixed(1)} KB, ${(gzipped / 1024).toFixed(1)} KB gzipped`);
}
console.log(
  `console first load: ${(total / 1024).toFixed(1)} KB gzipped (budget ${FIRST_LOAD_BUDGET_BYTES / 1024} KB)`,
);
if (total > FIRST_LOAD_BUDGET_BYTES) {
  console.error('console first load is over its budget');
  process.exit(1);
}
